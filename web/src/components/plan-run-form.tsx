// Dispatching a plan-run: a project with seeds, then one of its ready plans or a list of issue ids, and
// an agent; the template, ref, overrides and per-child cost cap are optional.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useQuery } from '../api/cache.ts';
import { sendJson, type ApiError } from '../api/client.ts';
import type {
  AgentList,
  CreatePlanRunBody,
  CreatePlanRunResult,
  PlanRunSource,
  ProjectList,
  ReadyPlans,
} from '../api/types.ts';
import { projectName } from '../pages/project-name.ts';
import { OverrideFields } from './override-fields.tsx';
import { ErrorBox } from './ui.tsx';

interface Prefill {
  project?: string;
  plan?: string;
}

function blank({ project, plan }: Prefill) {
  return {
    project: project ?? '',
    source: 'plan' as PlanRunSource,
    planId: plan ?? '',
    issues: '',
    agent: '',
    promptTemplate: '',
    ref: '',
    providerOverride: '',
    modelOverride: '',
    maxCostUsd: '',
  };
}

export function PlanRunForm({ project, plan }: Prefill) {
  const { route } = useLocation();
  const projects = useQuery<ProjectList>('/projects');
  const agents = useQuery<AgentList>('/agents');
  const [form, setForm] = useState(() => blank({ project, plan }));
  const ready = useQuery<ReadyPlans>(form.project ? `/projects/${encodeURIComponent(form.project)}/ready-plans` : null);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  // One key per filled-in form: a double submit (or a retry after a lost answer) dispatches once.
  const idempotencyKey = useMemo(() => crypto.randomUUID(), [form]);

  // A link from a project's page (?project=&plan=) fills the form in, even when this page is already open.
  useEffect(() => {
    if (plan)
      setForm((previous) => ({ ...previous, project: project ?? previous.project, source: 'plan', planId: plan }));
  }, [project, plan]);

  const field = (name: keyof typeof form) => ({
    value: form[name],
    onInput: (event: Event) => setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).value }),
  });
  const issueIds = form.issues.split(/[\s,]+/).filter(Boolean);
  const readyPlans = ready.data?.plans ?? [];
  // A pre-filled plan the ready list lacks (already dispatched, say) stays choosable: the server decides.
  const strayPlan = form.planId && !readyPlans.some((candidate) => candidate.id === form.planId) ? form.planId : null;

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const optional = (value: string) => (value.trim() ? value.trim() : undefined);
    const body: CreatePlanRunBody = {
      project: form.project,
      agent: form.agent,
      ...(form.source === 'plan' ? { planId: form.planId } : { issues: issueIds }),
      promptTemplate: optional(form.promptTemplate),
      ref: optional(form.ref),
      providerOverride: optional(form.providerOverride),
      modelOverride: optional(form.modelOverride),
      maxCostUsd: form.maxCostUsd.trim() ? Number(form.maxCostUsd) : undefined,
    };
    try {
      const result = await sendJson<CreatePlanRunResult>('POST', '/plan-runs', body, {
        'Idempotency-Key': idempotencyKey,
      });
      route(`/ui/plan-runs/${encodeURIComponent(result.planRun.id)}`);
    } catch (failure) {
      setError(failure as ApiError);
      setBusy(false);
    }
  };

  return (
    <form class="stack" onSubmit={submit} aria-label="New plan-run">
      <div class="grid-2">
        <label>
          Project
          <select
            required
            value={form.project}
            onChange={(event) => setForm({ ...form, project: event.currentTarget.value, planId: '' })}
          >
            <option value="">Choose a project…</option>
            {projects.data?.projects.map((candidate) => (
              <option key={candidate.id} value={candidate.id} disabled={!candidate.hasSeeds}>
                {projectName(candidate.gitUrl)}
                {candidate.hasSeeds ? '' : ' (no .seeds)'}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select required {...field('agent')} onChange={field('agent').onInput}>
            <option value="">Choose an agent…</option>
            {agents.data?.agents.map((agent) => (
              <option key={agent.name} value={agent.name}>
                {agent.name}
                {agent.model ? ` (${agent.model})` : ''}
              </option>
            ))}
          </select>
        </label>
      </div>
      <fieldset>
        <legend>Work on</legend>
        <div class="row">
          <label>
            <input
              type="radio"
              name="plan-run-source"
              checked={form.source === 'plan'}
              onChange={() => setForm({ ...form, source: 'plan' })}
            />
            a ready plan
          </label>
          <label>
            <input
              type="radio"
              name="plan-run-source"
              checked={form.source === 'issues'}
              onChange={() => setForm({ ...form, source: 'issues' })}
            />
            a list of issues
          </label>
        </div>
        {form.source === 'plan' ? (
          <label>
            Plan
            <select required disabled={!form.project} {...field('planId')} onChange={field('planId').onInput}>
              <option value="">
                {!form.project
                  ? 'Choose a project first'
                  : ready.loading
                    ? 'Loading plans…'
                    : readyPlans.length
                      ? 'Choose a plan…'
                      : 'No ready plans'}
              </option>
              {strayPlan ? <option value={strayPlan}>{strayPlan}</option> : null}
              {readyPlans.map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {`${candidate.name ? `${candidate.name} (${candidate.id})` : candidate.id}`}
                  {` — ${candidate.openChildCount} open`}
                </option>
              ))}
            </select>
          </label>
        ) : (
          <label>
            Issue ids, in order
            <input required placeholder="sd-12, sd-13, sd-14" autoComplete="off" {...field('issues')} />
            <span class="muted">
              {issueIds.length
                ? `${issueIds.length} issue${issueIds.length > 1 ? 's' : ''}, run one after another`
                : 'comma-separated'}
            </span>
          </label>
        )}
        <ErrorBox error={ready.error} title="Could not list the ready plans" />
      </fieldset>
      <details>
        <summary>Template, ref, overrides and limits</summary>
        <div class="stack">
          <label>
            Prompt template
            <textarea rows={3} maxLength={65_536} placeholder="work on sd {seed_id}" {...field('promptTemplate')} />
            <span class="muted">Must contain {'{seed_id}'}; each child gets its seed's id.</span>
          </label>
          <div class="grid-2">
            <OverrideFields field={field} costLabel="Cost cap per child (USD)" />
          </div>
        </div>
      </details>
      <ErrorBox error={error} title="Not dispatched" />
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Dispatching…' : 'Dispatch plan-run'}
        </button>
      </div>
    </form>
  );
}
