// Pieces the analytics and ops pages share: KPI tiles, a card with a heading and a picker, and
// bucket keys as people read them.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

export interface Kpi {
  label: string;
  /** undefined: still loading (the tile keeps its height). */
  value: string | undefined;
  detail?: string | undefined;
}

/** KPI tiles, each with a second line (blank when there is nothing to add) so every tile is as tall. */
export function KpiTiles({ items, label }: { items: Kpi[]; label: string }) {
  return (
    <ul class="kpis" aria-label={label}>
      {items.map((item) => (
        <li key={item.label} class="kpi" aria-busy={item.value === undefined ? 'true' : undefined}>
          <div class="value">{item.value ?? '…'}</div>
          <div class="label">{item.label}</div>
          <div class="label kpi-detail">{item.value === undefined ? '\u00a0' : (item.detail ?? '\u00a0')}</div>
        </li>
      ))}
    </ul>
  );
}

/** A titled card; `tools` (a picker) sits at the heading's end. */
export function Panel(props: { id: string; title: string; tools?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card" aria-labelledby={props.id}>
      <div class="card-head">
        <h2 id={props.id}>{props.title}</h2>
        {props.tools}
      </div>
      {props.children}
    </section>
  );
}

/** A select of labelled choices (which breakdown a table shows). */
function Picker<T extends string>(props: {
  label: string;
  value: T;
  choices: readonly (readonly [T, string])[];
  onChange: (value: T) => void;
}) {
  return (
    <label class="picker">
      {props.label}
      <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value as T)}>
        {props.choices.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A breakdown chosen with a "By" picker: the key, its label (the first column's heading) and the picker. */
export function useBreakdown<T extends string>(choices: readonly (readonly [T, string])[], initial: T) {
  const [value, setValue] = useState<T>(initial);
  const label = choices.find(([key]) => key === value)![1];
  return { value, label, picker: <Picker label="By" value={value} choices={choices} onChange={setValue} /> };
}

/** A bucket key as read: "__none__" (runs without a value) is "none", project ids become names. */
export function BucketKey({ value, names }: { value: string; names?: Map<string, string> }) {
  if (value === '__none__') return <span class="muted">none</span>;
  const name = names?.get(value);
  return name ? <span title={value}>{name}</span> : <>{value}</>;
}

/** `3 / 5`: a part of a whole, both counts. */
export function ofTotal(part: number, whole: number): string {
  return `${part.toLocaleString('en-US')} / ${whole.toLocaleString('en-US')}`;
}
