// One project: where it comes from and how fresh its clone is, and for the operator its plans,
// triggers and config problems, with refresh, delete, its secrets and the ways to start work on it.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { invalidate, useQuery } from '../api/cache.ts';
import { query, sendJson, type ApiError } from '../api/client.ts';
import { identity } from '../api/identity.ts';
import type { ProjectDetail, ProjectResult, RefreshProjectBody, RefreshResult } from '../api/types.ts';
import { ConfigSection, PlansSection, ReadyPlansSection, TriggersSection } from '../components/project-sections.tsx';
import { ErrorBox, Facts, Loading, PageHeader } from '../components/ui.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { relative, shortSha, when } from '../format.ts';
import { projectName } from './project-name.ts';

/** Every cached read about this project (and the list that shows it): a refresh may change them all. */
const aboutProject = (projectId: string) => {
  const base = `/projects/${encodeURIComponent(projectId)}`;
  return (path: string) => path === '/projects' || path === base || path.startsWith(`${base}/`);
};

export function ProjectPage() {
  const { params } = useRoute();
  const id = params.id!;
  const { route } = useLocation();
  const detail = useQuery<ProjectDetail>(`/projects/${encodeURIComponent(id)}`);
  const project = detail.data?.project;
  const name = project ? projectName(project.gitUrl) : id;
  useTitle(name);
  // Relative times ("next fire in 4 min") stay true while the page is open.
  const now = useNow(true, 30_000);
  const operator = identity.value.kind === 'operator';
  const [busy, setBusy] = useState<'refresh' | 'delete' | null>(null);
  const [refreshed, setRefreshed] = useState<RefreshResult>();
  const [actionError, setActionError] = useState<{ title: string; error: ApiError }>();
  // The router keeps this component when another project's page opens: drop the last one's outcome.
  useEffect(() => {
    setRefreshed(undefined);
    setActionError(undefined);
  }, [id]);

  if (detail.error) return <ErrorBox error={detail.error} title={`Project ${id}`} />;
  if (!project) return <Loading lines={8} />;

  const refresh = async () => {
    setBusy('refresh');
    setActionError(undefined);
    setRefreshed(undefined);
    try {
      const body: RefreshProjectBody = {};
      setRefreshed(await sendJson<RefreshResult>('POST', `/projects/${encodeURIComponent(id)}/refresh`, body));
      invalidate(aboutProject(id));
    } catch (failure) {
      setActionError({ title: 'Not refreshed', error: failure as ApiError });
    } finally {
      setBusy(null);
    }
  };

  const remove = async () => {
    if (!confirm(`Delete ${name}? Its trigger schedules and its clone on the server are removed.`)) return;
    setBusy('delete');
    setActionError(undefined);
    try {
      await sendJson<ProjectResult>('DELETE', `/projects/${encodeURIComponent(id)}`);
      route('/ui/projects');
      invalidate(aboutProject(id));
    } catch (failure) {
      // e.g. 409 while a run or plan-run of the project is active: the envelope says which.
      setActionError({ title: 'Not deleted', error: failure as ApiError });
      setBusy(null);
    }
  };

  // Only the operator's view carries the clone's path on the server.
  const clonePath: [string, ComponentChildren][] =
    'localPath' in project ? [['Clone', <span class="mono">{project.localPath}</span>]] : [];

  return (
    <section class="project-page" data-project-id={project.id}>
      <PageHeader title={name}>
        {operator ? (
          <button type="button" onClick={refresh} disabled={busy !== null}>
            {busy === 'refresh' ? 'Refreshing…' : 'Refresh'}
          </button>
        ) : null}
        {operator ? (
          <a class="button primary" href={`/ui/dispatch${query({ project: project.id })}`}>
            Dispatch a run
          </a>
        ) : null}
        <a class="button" href={`/ui/runs${query({ project: project.id })}`}>
          Runs
        </a>
        {operator ? (
          <a class="button" href={`/ui/projects/${encodeURIComponent(project.id)}/secrets`}>
            Secrets
          </a>
        ) : null}
        {operator ? (
          <button type="button" class="danger" onClick={remove} disabled={busy !== null}>
            {busy === 'delete' ? 'Deleting…' : 'Delete'}
          </button>
        ) : null}
      </PageHeader>
      {actionError ? <ErrorBox error={actionError.error} title={actionError.title} /> : null}
      {refreshed ? (
        <p class="note" role="status">
          Refreshed <code>{refreshed.ref}</code>: head is now{' '}
          <span class="mono" title={refreshed.headSha}>
            {shortSha(refreshed.headSha)}
          </span>
          .
        </p>
      ) : null}
      <div class="card">
        <Facts
          items={[
            ['Git URL', <span class="mono">{project.gitUrl}</span>],
            ['Default branch', <code>{project.defaultBranch}</code>],
            ['Added', when(project.addedAt)],
            [
              'Last fetched',
              project.lastFetchedAt ? (
                <span title={when(project.lastFetchedAt)}>{relative(project.lastFetchedAt, now)}</span>
              ) : (
                'never'
              ),
            ],
            [
              'Head',
              <span class="mono" title={project.lastHeadSha ?? undefined}>
                {shortSha(project.lastHeadSha)}
              </span>,
            ],
            ['Seeds', project.hasSeeds ? 'yes' : 'no'],
            ...clonePath,
          ]}
        />
      </div>
      {operator ? (
        <>
          <PlansSection projectId={project.id} hasSeeds={project.hasSeeds} now={now} />
          <ReadyPlansSection projectId={project.id} hasSeeds={project.hasSeeds} operator={operator} />
          <TriggersSection projectId={project.id} now={now} />
          <ConfigSection projectId={project.id} />
        </>
      ) : null}
    </section>
  );
}
