// What the suite harness (test/support/run-suite.ts) provides to every test file.
import type { ExecutionContext } from 'ava';

export function suiteTemporalAddress(): string {
  const address = process.env.SVC_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('SVC_TEST_TEMPORAL_ADDRESS is not set: run the tests with `npm test`');
  return address;
}

/** The PostgreSQL base URL, or undefined when the harness found none (never in CI). */
export function suitePostgresUrl(): string | undefined {
  return process.env.SVC_TEST_POSTGRES_URL || undefined;
}

export type DatabaseLeg = 'sqlite' | 'postgresql';

export const DATABASE_LEGS: DatabaseLeg[] = ['sqlite', 'postgresql'];

/** Marks a PostgreSQL test as not run, loudly, when there is no server (the harness fails in CI). */
export function postgresOrSkip(t: ExecutionContext, leg: DatabaseLeg): boolean {
  if (leg === 'sqlite' || suitePostgresUrl()) return true;
  t.log('PostgreSQL unreachable: this leg did not run');
  t.pass();
  return false;
}
