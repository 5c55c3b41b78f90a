// A project as people name it, `owner/repo`, linking to its page; its id stays in the tooltip (and
// shows until the project list is read, or for a project the list no longer holds).
import { useQuery } from '../api/cache.ts';
import type { ProjectList } from '../api/types.ts';
import { projectName } from '../pages/project-name.ts';

export function ProjectLink({ projectId }: { projectId: string | null }) {
  const projects = useQuery<ProjectList>(projectId ? '/projects' : null);
  if (!projectId) return <>—</>;
  const project = projects.data?.projects.find((candidate) => candidate.id === projectId);
  return (
    <a href={`/ui/projects/${encodeURIComponent(projectId)}`} title={projectId} data-testid="project-link">
      {project ? projectName(project.gitUrl) : projectId}
    </a>
  );
}
