// `svc db migrate-to-postgres` end to end: an svc on SQLite with real runs, projects and plan-runs
// moves to PostgreSQL with the CLI, and an svc started there answers every one of them with the
// same JSON. Plus the type conversions on rows made for them, and every refusal.
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ProjectEntity, RunEntity, RunEventEntity } from '../../db/entities/index.ts';
import { initORM, migrate, type ReadModel } from '../../db/orm.ts';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { svcCli } from '../support/cli.ts';
import { postgresOrSkip, suitePostgresUrl } from '../support/env.ts';
import { setSwitch } from '../support/plan-fixture.ts';
import { populatedStack } from '../support/populated.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

/** The suite's PostgreSQL; in CI its absence fails the test rather than skipping it. */
function postgresBase(t: ExecutionContext): string | undefined {
  const url = suitePostgresUrl();
  if (url) return url;
  if (process.env.CI) t.fail('PostgreSQL is required in CI (SVC_TEST_POSTGRES_URL is empty)');
  else postgresOrSkip(t, 'postgresql');
  return undefined;
}

const migrateCli = (from: string, to: string, ...more: string[]) =>
  svcCli(['db', 'migrate-to-postgres', '--from', from, '--to', to, ...more]);

/**
 * Everything the API answers about runs, their events, projects and plan-runs, by path. Event
 * lines are compared parsed: jsonb keeps an object's keys in its own order, not the writer's.
 */
async function readEverything(svc: TestStack): Promise<Record<string, unknown>> {
  const seen: Record<string, unknown> = {};
  const get = async (path: string) => {
    const response = await svc.request('GET', path);
    const lines = () =>
      response.text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line));
    // The same rows, read through two servers: links name each server's own address.
    const body = JSON.parse(JSON.stringify(response.body ?? lines()).replaceAll(svc.url, '<server>'));
    seen[path] = { status: response.status, body };
    return response.body;
  };
  const { runs } = await get('/runs?limit=500');
  for (const run of runs) {
    await get(`/runs/${run.id}`);
    await get(`/runs/${run.id}/events?follow=0`);
  }
  for (const project of (await get('/projects')).projects) await get(`/projects/${project.id}`);
  for (const planRun of (await get('/plan-runs')).planRuns) await get(`/plan-runs/${planRun.id}`);
  return seen;
}

test.serial('an svc on SQLite with real runs moves to PostgreSQL and reads the same', async (t) => {
  t.timeout(600_000);
  const base = postgresBase(t);
  if (!base) return;
  const populated = await populatedStack('sqlite', 'migrate-e2e');
  const scratch = await createScratchPostgresDatabase(base);
  const { dataDir, databaseUrl: sqlite } = populated.svc.config;
  // API-only stacks on the data directory: one on each database, each reading the same rows.
  const apiOn = (databaseUrl: string) =>
    startTestStack({ dataDir, worker: false, env: { ...populated.fixture.env, DATABASE_URL: databaseUrl } });
  let onPostgres: TestStack | undefined;
  try {
    // Every run ends first (the held one is let go); then svc stops, and nothing writes any more.
    setSwitch(populated.fixture, 'slow', 'hold-running', false);
    await waitForRunState(populated.svc, populated.ids.runs.running, undefined, 120_000);
    await populated.svc.stack.stop();
    const onSqlite = await apiOn(sqlite);
    const before = await readEverything(onSqlite).finally(() => onSqlite.stop());
    const runs = (before['/runs?limit=500'] as { body: { runs: unknown[] } }).body.runs;
    t.true(runs.length >= 7, 'the populated runs and the plan-runs children');

    const migrated = await migrateCli(sqlite, scratch.url, '--batch-size', '5');
    t.is(migrated.code, 0, migrated.stderr);
    const report = migrated.lines[0];
    t.like(report, { ok: true, from: sqlite, replacedNulCharacters: 0 });
    const rows = Object.fromEntries(report.tables.map((table: any) => [table.table, table.rows]));
    t.is(rows.runs, runs.length);
    t.is(rows.projects, 4);
    t.is(rows.plan_runs, 3);
    t.true(rows.run_events > 5, 'more events than one batch');
    t.true(rows.lifecycle_events > 0);
    t.deepEqual(report.sequences, ['lifecycle_events.id', 'run_events.id']);
    for (const table of report.tables)
      t.regex(migrated.stderr, new RegExp(`^copied ${table.table}: ${table.rows}/${table.rows} rows`, 'm'));

    onPostgres = await apiOn(scratch.url);
    t.is(onPostgres.stack.readModel.dialect, 'postgresql');
    t.deepEqual(await readEverything(onPostgres), before);

    const again = await migrateCli(sqlite, scratch.url);
    t.is(again.code, 1);
    t.regex(again.stderr, /^svc: \[target_not_empty\] the target database already holds svc data \(.*runs/m);
    t.regex(again.stderr, /hint: /);
  } finally {
    await onPostgres?.stop();
    await populated.stop();
    await scratch.drop();
  }
});

/** A SQLite read model at this version's schema, filled by hand with rows that need converting. */
async function craftedSource(): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-migrate-')), 'svc.sqlite');
  const readModel = await initORM({ databaseUrl: file });
  try {
    await migrate(readModel);
    const sql = readModel.em().getConnection();
    await sql.execute(`insert into projects (id, git_url, local_path, default_branch, added_at, has_seeds)
      values ('prj_a', 'https://github.com/a/a', '/tmp/a', 'main', 1795000000123, 1),
             ('prj_b', 'https://github.com/a/b', '/tmp/b', 'main', 1795000000456, 0)`);
    await sql.execute(`insert into runs (id, agent_name, state, created_at, prompt, "trigger", updated_at,
        rendered_agent_json, cost_usd)
      values ('run_a', 'shell', 'succeeded', 1795000000001, 'a' || char(0) || 'b', 'cli', 1795000000999,
        '{"name":"shell"}', 0.125)`);
    // 123 is stored as an integer (the json column's numeric affinity); one payload escapes a NUL.
    const payloads = ['123', '{"text":"a\\u0000b"}', '{"text":"a\\\\u0000b"}', '"plain"', null, '[1,2]', '{}'];
    for (const [seq, payload] of payloads.entries())
      await sql.execute(
        `insert into run_events (run_id, seq, ts, kind, stream, payload, dedupe_key)
         values ('run_a', ?, ?, 'k', null, ?, ?)`,
        [seq + 1, 1795000000000 + seq, payload, `d${seq}`],
      );
  } finally {
    await readModel.close();
  }
  return file;
}

test.serial('booleans, dates, JSON and NUL characters convert; sequences follow the copied ids', async (t) => {
  const base = postgresBase(t);
  if (!base) return;
  const source = await craftedSource();
  const scratch = await createScratchPostgresDatabase(base);
  let target: ReadModel | undefined;
  try {
    const migrated = await migrateCli(source, scratch.url, '--batch-size', '2');
    t.is(migrated.code, 0, migrated.stderr);
    t.is(migrated.lines[0].replacedNulCharacters, 2, 'one in a text column, one escaped in JSON');
    t.regex(migrated.stderr, /^copied run_events: 7\/7 rows/m);

    target = await initORM({ databaseUrl: scratch.url });
    const em = target.em();
    const projects = await em.find(ProjectEntity, {}, { orderBy: { id: 'asc' } });
    t.deepEqual(
      projects.map((project) => [project.id, project.hasSeeds, project.addedAt.toISOString()]),
      [
        ['prj_a', true, new Date(1795000000123).toISOString()],
        ['prj_b', false, new Date(1795000000456).toISOString()],
      ],
    );
    const run = await em.findOneOrFail(RunEntity, { id: 'run_a' });
    t.like(run, { prompt: 'a\uFFFDb', createdAt: 1795000000001, costUsd: 0.125, renderedAgentJson: { name: 'shell' } });
    t.is(run.updatedAt.getTime(), 1795000000999);
    const events = await em.find(RunEventEntity, {}, { orderBy: { seq: 'asc' } });
    t.deepEqual(
      events.map((event) => event.payload),
      [123, { text: 'a\uFFFDb' }, { text: 'a\\u0000b' }, 'plain', null, [1, 2], {}],
    );
    t.is(events[6]!.ts.getTime(), 1795000000006);
    // A new event gets the next id, not one the copy already used.
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    const inserted = await client.query(
      `insert into run_events (run_id, seq, ts, kind, dedupe_key) values ('run_a', 99, now(), 'k', 'new') returning id`,
    );
    await client.end();
    t.is(inserted.rows[0].id, Math.max(...events.map((event) => event.id)) + 1);
  } finally {
    await target?.close();
    await scratch.drop();
  }
});

test.serial('refusals: a foreign target, an outdated or extended source, and usage errors', async (t) => {
  const missingTo = await svcCli(['db', 'migrate-to-postgres', '--from', '/tmp/x.sqlite']);
  t.is(missingTo.code, 2);
  t.is((await svcCli(['db', 'migrate-to-postgres', '--to', 'postgres://127.0.0.1/x'])).code, 2);
  const notSqlite = join(mkdtempSync(join(tmpdir(), 'svc-migrate-')), 'notes.txt');
  writeFileSync(notSqlite, 'hello');
  const wrongFrom = await migrateCli(notSqlite, 'postgres://127.0.0.1/x');
  t.is(wrongFrom.code, 2);
  t.regex(wrongFrom.stderr, /is not a SQLite database file/);
  const source = await craftedSource();
  const wrongTo = await migrateCli(source, 'mysql://127.0.0.1/x');
  t.is(wrongTo.code, 2);
  t.regex(wrongTo.stderr, /postgres:\/\//);
  // Checked before the target is even reached: a table no entity describes would be lost.
  const extended = await craftedSource();
  const extra = await initORM({ databaseUrl: extended });
  await extra.em().getConnection().execute('create table notes (id integer primary key, text text)');
  await extra.close();
  const unknownTable = await migrateCli(extended, 'postgres://postgres@127.0.0.1:1/nowhere');
  t.is(unknownTable.code, 1);
  t.regex(unknownTable.stderr, /\[source_schema_mismatch\] .*\(notes\)/);

  const base = postgresBase(t);
  if (!base) return;
  const scratch = await createScratchPostgresDatabase(base);
  try {
    const client = new pg.Client({ connectionString: scratch.url });
    await client.connect();
    await client.query('create table invoices (id int)');
    await client.end();
    const foreign = await migrateCli(source, scratch.url);
    t.is(foreign.code, 1);
    t.regex(foreign.stderr, /\[target_not_empty\] the target database has tables svc does not own \(invoices\)/);

    const outdated = await craftedSource();
    const readModel = await initORM({ databaseUrl: outdated });
    await readModel.em().getConnection().execute(`delete from svc_migrations where name like '%runs_created_at'`);
    await readModel.close();
    const old = await migrateCli(outdated, scratch.url);
    t.is(old.code, 1);
    t.regex(old.stderr, /\[source_outdated\] .*Migration20261123161113_runs_created_at/);
    t.regex(old.stderr, /hint: start this svc version on it once/);
  } finally {
    await scratch.drop();
  }
});
