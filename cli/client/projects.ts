// A project as a person names it: its id (prj_…) or its GitHub repository (owner/repo, or any URL
// form `svc add-project` takes), turned into the id the API wants.
import { UsageError } from 'clipanion';
import type { z } from 'zod';
import type { projectsResponse } from '../../api/routes/projects.schema.ts';
import { parseGitHubUrl } from '../../core/git-url.ts';
import type { SvcClient } from './http.ts';

type Projects = z.output<typeof projectsResponse>;

const PROJECT_ID = /^prj_/;

export async function resolveProject(client: SvcClient, name: string): Promise<string> {
  if (PROJECT_ID.test(name)) return name;
  // owner/repo alone is github.com's: the parser wants a host for the bare form.
  const parsed = parseGitHubUrl(/^[^/:@\s.]+\/[^/\s]+$/.test(name) ? `github.com/${name}` : name);
  if (!parsed.ok) throw new UsageError(`"${name}" is neither a project id (prj_…) nor owner/repo: ${parsed.message}`);
  const { projects } = await client.request<Projects>('GET', '/projects');
  const project = projects.find((candidate) => candidate.gitUrl === parsed.repo.canonicalUrl);
  if (!project)
    throw new UsageError(
      `no registered project is ${parsed.repo.owner}/${parsed.repo.name} (\`svc projects\` lists them, ` +
        '`svc add-project` registers one)',
    );
  return project.id;
}
