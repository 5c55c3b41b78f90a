// Dispatching a run: agent × project × prompt, with the overrides and the cost cap. Reached with
// ?continue=<run> (a run cut from that run's pushed branch) or ?replicate=<run> (that run again).
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useQuery } from '../api/cache.ts';
import { sendJson, type ApiError } from '../api/client.ts';
import type { AgentList, DispatchRunBody, DispatchRunResult, ProjectList, RunDetail } from '../api/types.ts';
import { ErrorBox, PageHeader } from '../components/ui.tsx';
import { OverrideFields } from '../components/override-fields.tsx';
import { useTitle } from '../components/hooks.ts';
import { projectName } from './project-name.ts';

export function DispatchPage() {
  useTitle('Dispatch');
  const { query: params, route } = useLocation();
  const parentId = params.continue ?? params.replicate ?? null;
  const mode = params.continue ? 'continue' : params.replicate ? 'replicate' : 'fresh';
  const agents = useQuery<AgentList>('/agents');
  const projects = useQuery<ProjectList>('/projects');
  const parent = useQuery<RunDetail>(parentId ? `/runs/${encodeURIComponent(parentId)}` : null);
  const [form, setForm] = useState({
    agent: params.agent ?? '',
    project: params.project ?? '',
    prompt: '',
    providerOverride: '',
    modelOverride: '',
    maxCostUsd: '',
    ref: '',
    seedId: '',
    baseCommit: '',
  });
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  // One key per filled-in form: a double submit (or a retry after a lost answer) dispatches once.
  const idempotencyKey = useMemo(() => crypto.randomUUID(), [form]);

  useEffect(() => {
    const run = parent.data?.run;
    if (!run) return;
    setForm((previous) => ({
      ...previous,
      agent: run.agentName,
      project: run.projectId ?? '',
      prompt: mode === 'replicate' ? run.prompt : previous.prompt,
    }));
  }, [parent.data?.run.id]);

  const field = (name: keyof typeof form) => ({
    value: form[name],
    onInput: (event: Event) => setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).value }),
  });

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const optional = (value: string) => (value.trim() ? value.trim() : undefined);
    const body: DispatchRunBody = {
      agent: optional(form.agent),
      project: optional(form.project) ?? null,
      prompt: form.prompt,
      trigger: 'dashboard',
      providerOverride: optional(form.providerOverride),
      modelOverride: optional(form.modelOverride),
      maxCostUsd: form.maxCostUsd.trim() ? Number(form.maxCostUsd) : undefined,
      ref: optional(form.ref),
      seedId: optional(form.seedId),
      baseCommit: optional(form.baseCommit),
      ...(mode === 'continue'
        ? { continueFromRunId: parentId }
        : mode === 'replicate'
          ? { cloneFromRunId: parentId }
          : {}),
    };
    try {
      const result = await sendJson<DispatchRunResult>('POST', '/runs', body, { 'Idempotency-Key': idempotencyKey });
      route(`/ui/runs/${encodeURIComponent(result.run.id)}`);
    } catch (failure) {
      setError(failure as ApiError);
      setBusy(false);
    }
  };

  return (
    <section class="narrow">
      <PageHeader
        title={mode === 'continue' ? 'Continue a run' : mode === 'replicate' ? 'Replicate a run' : 'Dispatch a run'}
      />
      {parentId ? (
        <p class="note">
          {mode === 'continue' ? 'Starts from the pushed branch of ' : 'Runs again, from the default base: '}
          <a href={`/ui/runs/${encodeURIComponent(parentId)}`} class="mono">
            {parentId}
          </a>
        </p>
      ) : null}
      <ErrorBox error={parent.error} title="The parent run" />
      <form class="stack" onSubmit={submit}>
        <div class="grid-2">
          <label>
            Agent
            <select required={mode !== 'replicate'} {...field('agent')} onChange={field('agent').onInput}>
              <option value="">Choose an agent…</option>
              {agents.data?.agents.map((agent) => (
                <option key={agent.name} value={agent.name}>
                  {agent.name}
                  {agent.model ? ` (${agent.model})` : ''}
                </option>
              ))}
            </select>
          </label>
          <label>
            Project
            <select {...field('project')} onChange={field('project').onInput}>
              <option value="">No project (a scratch workspace)</option>
              {projects.data?.projects.map((project) => (
                <option key={project.id} value={project.id}>
                  {projectName(project.gitUrl)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <label>
          Prompt
          <textarea
            rows={8}
            required={mode !== 'replicate'}
            placeholder="What should the agent do?"
            {...field('prompt')}
          />
        </label>
        <details>
          <summary>Overrides and limits</summary>
          <div class="grid-2">
            <OverrideFields field={field} costLabel="Cost cap (USD)" />
            <label>
              Seed (issue) id
              <input {...field('seedId')} />
            </label>
            <label>
              Base commit
              <input pattern="[0-9a-f]{40}" placeholder="40-hex SHA" {...field('baseCommit')} />
            </label>
          </div>
        </details>
        <ErrorBox error={error} title="Not dispatched" />
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Dispatching…' : 'Dispatch'}
          </button>
        </div>
      </form>
    </section>
  );
}
