// The API's Project JSON, declared once: the API validates and documents it from this schema, the
// presenter is typed by it, the project workflows carry it as ProjectRecord, and the read model's
// entity is checked against it at compile time (db/entities/project.entity.ts). Add a field here
// first; the compiler then names every other place.
import { z } from 'zod';

/** A registered project, as every projects route answers with it (a spectator's without its path). */
export const projectSchema = z.object({
  id: z.string(),
  gitUrl: z.string(),
  localPath: z.string(),
  defaultBranch: z.string(),
  addedAt: z.string(),
  lastFetchedAt: z.string().nullable(),
  lastHeadSha: z.string().nullable(),
  hasSeeds: z.boolean(),
});

/** A project as the API presents it, and as the project workflows hand it on (timestamps in ISO 8601). */
export type ProjectJson = z.infer<typeof projectSchema>;
