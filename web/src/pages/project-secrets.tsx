// A project's secrets, for the operator only: listed by name, scope and when they changed (the API
// never answers a value), set or replaced with the form, removed after a confirmation. A spectator
// gets neither the page nor a request for its data.
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { invalidate, useQuery } from '../api/cache.ts';
import { sendJson, type ApiError } from '../api/client.ts';
import { identity } from '../api/identity.ts';
import type { ProjectDetail, ProjectSecret, ProjectSecretList } from '../api/types.ts';
import { type Column, DataTable } from '../components/data-table.tsx';
import { SecretForm } from '../components/secret-form.tsx';
import { Empty, ErrorBox, Loading, PageHeader } from '../components/ui.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { relative } from '../format.ts';
import { projectName } from './project-name.ts';

export function ProjectSecretsPage() {
  const { params } = useRoute();
  const id = params.id!;
  const operator = identity.value.kind === 'operator';
  const base = `/projects/${encodeURIComponent(id)}`;
  const detail = useQuery<ProjectDetail>(base);
  const secrets = useQuery<ProjectSecretList>(operator ? `${base}/secrets` : null);
  const project = detail.data?.project;
  const name = project ? projectName(project.gitUrl) : id;
  useTitle(`Secrets · ${name}`);
  // "2 min ago" stays true while the page is open; a row set just now reads against the present.
  useNow(true, 30_000);
  const [busy, setBusy] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<string>();
  const [actionError, setActionError] = useState<{ title: string; error: ApiError }>();
  useEffect(() => {
    setOutcome(undefined);
    setActionError(undefined);
  }, [id]);

  if (!operator)
    return (
      <section>
        <PageHeader title="Secrets" />
        <Empty>
          A project's secrets are for the operator. <a href="/ui/sign-in">Sign in</a>, or go back to{' '}
          <a href={`/ui/projects/${encodeURIComponent(id)}`}>the project</a>.
        </Empty>
      </section>
    );
  if (detail.error) return <ErrorBox error={detail.error} title={`Project ${id}`} />;

  const set = async (secret: ProjectSecret) => {
    setActionError(undefined);
    // The same name set again keeps its creation time: a later update is a replacement.
    setOutcome(`${secret.createdAt === secret.updatedAt ? 'Set' : 'Replaced'} ${secret.name} (${secret.scope}).`);
    await secrets.reload();
  };

  const remove = async (secret: ProjectSecret) => {
    if (!confirm(`Remove ${secret.name} from ${name}? Runs started from now on no longer get it.`)) return;
    setBusy(secret.name);
    setActionError(undefined);
    setOutcome(undefined);
    try {
      await sendJson<void>('DELETE', `${base}/secrets/${encodeURIComponent(secret.name)}`);
      setOutcome(`Removed ${secret.name}.`);
    } catch (failure) {
      setActionError({ title: `${secret.name} not removed`, error: failure as ApiError });
    } finally {
      setBusy(null);
      invalidate((path) => path === `${base}/secrets`);
    }
  };

  const columns: Column<ProjectSecret>[] = [
    { label: 'Name', class: 'mono', render: (secret) => secret.name },
    { label: 'Scope', render: (secret) => <span class="badge tone-neutral">{secret.scope}</span> },
    { label: 'Updated', title: (secret) => secret.updatedAt, render: (secret) => relative(secret.updatedAt) },
    {
      label: 'Action',
      render: (secret) => (
        <button
          type="button"
          class="danger"
          aria-label={`Remove ${secret.name}`}
          disabled={busy !== null}
          onClick={() => void remove(secret)}
        >
          {busy === secret.name ? 'Removing…' : 'Remove'}
        </button>
      ),
    },
  ];

  return (
    <section class="project-secrets-page" data-project-id={id}>
      <PageHeader
        title={
          <>
            Secrets of <a href={`/ui/projects/${encodeURIComponent(id)}`}>{name}</a>
          </>
        }
      />
      <p class="muted">
        Every run of the project gets a <code>run</code> secret as an environment variable, and its value is masked in
        the run's output. Values are never shown back.
      </p>
      {actionError ? <ErrorBox error={actionError.error} title={actionError.title} /> : null}
      {outcome ? (
        <p class="note" role="status">
          {outcome}
        </p>
      ) : null}
      <section class="card" aria-labelledby="secrets-title">
        <h2 id="secrets-title">Secrets</h2>
        <ErrorBox error={secrets.error} title="Could not list the secrets" />
        {secrets.loading ? <Loading lines={3} /> : null}
        {secrets.data ? (
          <DataTable
            class="secrets-table"
            aria-label="Secrets"
            columns={columns}
            rows={secrets.data.secrets}
            rowKey={(secret) => secret.name}
            row={(secret) => ({ 'data-secret': secret.name, 'data-scope': secret.scope })}
            empty={<Empty>No secrets yet.</Empty>}
          />
        ) : null}
      </section>
      <SecretForm projectId={id} onSet={set} />
    </section>
  );
}
