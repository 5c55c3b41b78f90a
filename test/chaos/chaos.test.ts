// The chaos suite, short (`npm run chaos` runs it at full size): runs and a plan-run on the
// production topology while the worker, the API and Temporal are killed and PostgreSQL restarted;
// every one must end correctly, once.
import test from 'ava';
import { canRunPrivatePostgres } from '../support/private-postgres.ts';
import { runChaos } from './chaos.ts';

test('under kill -9 of every process and a database restart, every run ends correctly and once', async (t) => {
  if (!canRunPrivatePostgres()) {
    // CI has PostgreSQL's binaries (the suite's own server): this only happens on a bare laptop.
    t.log('no PostgreSQL binaries for the topology');
    t.pass();
    return;
  }
  t.timeout(600_000);
  const report = await runChaos({ runs: 20, planRuns: 1, log: (line) => t.log(line) });
  t.log(JSON.stringify({ ...report, problems: report.problems.length }));
  t.deepEqual(report.problems, []);
  t.is(report.correct, report.runs + report.planRuns);
  for (const [kind, count] of Object.entries(report.disruptions)) t.true(count >= 1, `no ${kind} happened`);
});
