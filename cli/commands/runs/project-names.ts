// Projects as a person reads them in a table: owner/repo rather than prj_… ids.
import type { z } from 'zod';
import type { projectsResponse } from '../../../api/routes/projects.schema.ts';
import type { SvcClient } from '../../client/http.ts';

type Projects = z.output<typeof projectsResponse>;

/** id → owner/repo (the id itself when unknown, `—` for none). One GET /projects; none if it fails. */
export async function projectNames(client: SvcClient): Promise<(id: string | null) => string> {
  const names = new Map<string, string>();
  try {
    const { projects } = await client.request<Projects>('GET', '/projects');
    for (const project of projects) names.set(project.id, project.gitUrl.replace(/^https:\/\/github\.com\//, ''));
  } catch {
    // The table then shows ids: the names are a convenience, not worth failing the listing for.
  }
  return (id) => (id === null ? '—' : (names.get(id) ?? id));
}
