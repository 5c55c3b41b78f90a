// A project as a person names it: its id (prj_…) or its GitHub repository (owner/repo, or any URL
// form `svc add-project` takes), turned into the id the API wants.
import { UsageError } from 'clipanion';
import type { z } from 'zod';
import type { projectsResponse } from '../../api/routes/projects.schema.ts';
import { parseGitHubUrl } from '../../core/git-url.ts';
import type { SvcClient } from './http.ts';

type Projects = z.output<typeof projectsResponse>;

export async function resolveProject(client: SvcClient, name: string): Promise<string> {
  // No slash: an id (prj_…), which the API checks itself.
  if (!name.includes('/')) return name;
  // owner/repo alone is github.com's: the parser wants a host for the bare form.
  const parsed = parseGitHubUrl(/^[^/:@\s.]+\/[^/\s]+$/.test(name) ? `github.com/${name}` : name);
  if (!parsed.ok) throw new UsageError(`"${name}" is not owner/repo: ${parsed.message}`);
  const { projects } = await client.request<Projects>('GET', '/projects');
  const project = projects.find((candidate) => candidate.gitUrl === parsed.repo.canonicalUrl);
  if (!project)
    throw new UsageError(
      `no registered project is ${parsed.repo.owner}/${parsed.repo.name} (\`svc projects\` lists them, ` +
        '`svc add-project` registers one)',
    );
  return project.id;
}
