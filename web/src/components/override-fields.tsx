// The fields a run and a plan-run share: the cost cap and the overrides of the agent's defaults.
// The form owns the values; `field` binds one of them (value + onInput).

export type OverrideName = 'maxCostUsd' | 'ref' | 'providerOverride' | 'modelOverride';
type Binding = { value: string; onInput: (event: Event) => void };

export function OverrideFields({ field, costLabel }: { field: (name: OverrideName) => Binding; costLabel: string }) {
  return (
    <>
      <label>
        {costLabel}
        <input type="number" min="0.01" step="0.01" inputMode="decimal" placeholder="none" {...field('maxCostUsd')} />
      </label>
      <label>
        Git ref
        <input placeholder="the default branch" {...field('ref')} />
      </label>
      <label>
        Provider
        <input placeholder="the agent's" {...field('providerOverride')} />
      </label>
      <label>
        Model
        <input placeholder="the agent's" {...field('modelOverride')} />
      </label>
    </>
  );
}
