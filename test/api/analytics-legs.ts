// The analytics tests' databases: one seeded read model per leg (SQLite file, scratch PostgreSQL),
// opened once per test file and shared by its tests (they only read), and a check that an answer
// conforms to its response schema as the OpenAPI document states it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { EntityManager } from '@mikro-orm/sql';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z, type ZodType } from 'zod';
import { AnalyticsService } from '../../api/services/analytics.service.ts';
import { AnalyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { initORM, migrate, type ReadModel } from '../../db/orm.ts';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { suitePostgresUrl, type DatabaseLeg } from '../support/env.ts';

/** The tests' clock: 2026-11-12T12:00Z, inside the fixture's window. */
export const NOW = Date.UTC(2026, 10, 12, 12);

export interface Leg {
  readModel: ReadModel;
  service: AnalyticsService;
  repository: AnalyticsRepository;
  close(): Promise<void>;
}

/** Opens each leg's read model once, seeded by `seed`; `closeAll` in test.after.always. */
export function analyticsLegs(seed: (em: EntityManager) => Promise<void>) {
  const legs = new Map<DatabaseLeg, Promise<Leg>>();
  const open = (leg: DatabaseLeg): Promise<Leg> => {
    let opened = legs.get(leg);
    if (!opened) {
      opened = (async () => {
        const scratch = leg === 'postgresql' ? await createScratchPostgresDatabase(suitePostgresUrl()!) : undefined;
        const readModel = await initORM({
          databaseUrl: scratch?.url ?? join(mkdtempSync(join(tmpdir(), 'svc-analytics-')), 'svc.sqlite'),
        });
        await migrate(readModel);
        await seed(readModel.em());
        const repository = new AnalyticsRepository(readModel);
        return {
          readModel,
          repository,
          service: new AnalyticsService(repository, () => NOW),
          close: async () => {
            await readModel.close();
            await scratch?.drop();
          },
        };
      })();
      legs.set(leg, opened);
    }
    return opened;
  };
  const closeAll = async () => {
    for (const leg of legs.values()) await (await leg).close();
  };
  return { open, closeAll };
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
/** Whether a value conforms to a response schema as the OpenAPI document states it (no extra member). */
export function conforms(schema: ZodType, value: unknown): boolean {
  const { $schema: _ignored, ...document } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'output' });
  return ajv.validate(document, value);
}
