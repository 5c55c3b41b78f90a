// The registered projects, and for the operator the form that registers another.
import { useLocation } from 'preact-iso';
import { useQuery } from '../api/cache.ts';
import { identity } from '../api/identity.ts';
import type { ProjectList } from '../api/types.ts';
import { RegisterProject } from '../components/project-register.tsx';
import { Empty, ErrorBox, Loading, PageHeader } from '../components/ui.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { relative, shortSha } from '../format.ts';
import { projectName } from './project-name.ts';

export function ProjectsPage() {
  useTitle('Projects');
  const { route } = useLocation();
  const projects = useQuery<ProjectList>('/projects');
  // "fetched 3 min ago" keeps reading true while the page stays open.
  const now = useNow(true, 30_000);
  const operator = identity.value.kind === 'operator';

  const registered = async (projectId: string) => {
    await projects.reload();
    route(`/ui/projects/${encodeURIComponent(projectId)}`);
  };

  return (
    <section>
      <PageHeader title="Projects">
        {operator ? (
          <a class="button" href="#register-title">
            Register a project
          </a>
        ) : null}
      </PageHeader>
      <ErrorBox error={projects.error} title="Could not list projects" />
      {projects.loading ? <Loading lines={5} /> : null}
      {projects.data ? (
        projects.data.projects.length === 0 ? (
          <Empty>No projects yet.{operator ? ' Register one below.' : ''}</Empty>
        ) : (
          <table class="table projects-table">
            <thead>
              <tr>
                <th scope="col">Project</th>
                <th scope="col">Default branch</th>
                <th scope="col">Last fetched</th>
                <th scope="col">Head</th>
                <th scope="col">Seeds</th>
              </tr>
            </thead>
            <tbody>
              {projects.data.projects.map((project) => (
                <tr key={project.id} data-project-id={project.id}>
                  <td data-label="Project">
                    <a href={`/ui/projects/${encodeURIComponent(project.id)}`} title={project.gitUrl}>
                      {projectName(project.gitUrl)}
                    </a>
                  </td>
                  <td data-label="Default branch">
                    <code>{project.defaultBranch}</code>
                  </td>
                  <td data-label="Last fetched" title={project.lastFetchedAt ?? undefined}>
                    {project.lastFetchedAt ? relative(project.lastFetchedAt, now) : 'never'}
                  </td>
                  <td data-label="Head" class="mono" title={project.lastHeadSha ?? undefined}>
                    {shortSha(project.lastHeadSha)}
                  </td>
                  <td data-label="Seeds">{project.hasSeeds ? 'yes' : <span class="muted">no</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
      {operator ? <RegisterProject onRegistered={registered} /> : null}
    </section>
  );
}
