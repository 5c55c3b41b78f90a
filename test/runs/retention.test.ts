// Retention as an operator sets it: a data directory's pass, started by its Temporal Schedule,
// removes the workspace and sandbox directory of a run that ended (no PR), old salvage bundles and
// half-made workspaces, and the events of runs past SVC_RETENTION_EVENTS (the run's row stays);
// it leaves a running run's files, fresh salvage and directories of runs svc does not know. The
// pass shows in GET /ops/overview and in the metrics. On both read-model legs.
import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remote, svcCli } from '../support/cli.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { waitFor } from '../support/processes.ts';
import { retentionPass } from '../support/retention-pass.ts';
import { runStdout, startTestStack, waitForRunState } from '../support/stack.ts';

const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - { name: quick, command: ["bash", "-c", "echo hello from a short run"] }',
    '  - { name: sleeper, command: ["bash", "-c", "echo still here; sleep 120"] }',
  ].join('\n'),
);

const HOUR = 3600_000;
const aged = (path: string, ms: number) => utimesSync(path, new Date(Date.now() - ms), new Date(Date.now() - ms));

for (const leg of DATABASE_LEGS) {
  test(`${leg}: a pass removes what ended runs left and keeps what live runs use`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({
      database: leg,
      env: {
        SVC_AGENTS_FILE: agentsFile,
        SVC_RETENTION_SANDBOXES: '1s',
        SVC_RETENTION_WORKSPACES: '7d',
        SVC_RETENTION_EVENTS: '1s',
        SVC_RETENTION_SALVAGE: '1h',
      },
    });
    t.teardown(() => svc.stop());
    const { dataDir } = svc.config;
    const dispatch = async (agent: string) =>
      (await svc.request('POST', '/runs', { body: { agent, prompt: 'go' } })).body.run.id as string;

    const ended = await dispatch('quick');
    t.like(await waitForRunState(svc, ended), { state: 'succeeded' });
    t.deepEqual(await runStdout(svc, ended), ['hello from a short run']);
    const running = await dispatch('sleeper');
    await waitFor(async () => (await runStdout(svc, running)).includes('still here'), 'the sleeper prints', 30_000);

    // Left by earlier runs and takes: an old and a new salvage bundle, an old and a new half-made
    // workspace, and a directory no run of the read model owns.
    const salvage = join(dataDir, 'salvage');
    mkdirSync(salvage, { recursive: true });
    writeFileSync(join(salvage, 'run_old.bundle'), 'x'.repeat(8192));
    aged(join(salvage, 'run_old.bundle'), 2 * HOUR);
    writeFileSync(join(salvage, 'run_new.bundle'), 'y');
    const workspaces = join(dataDir, 'workspaces');
    mkdirSync(join(workspaces, 'run_gone.partial-run_gone'), { recursive: true });
    aged(join(workspaces, 'run_gone.partial-run_gone'), 48 * HOUR);
    mkdirSync(join(workspaces, 'run_cut.partial-run_cut'), { recursive: true });
    mkdirSync(join(workspaces, 'run_unknown'), { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the 1 s retentions

    const pass = await retentionPass(svc);
    t.true(pass.removed.workspaces >= 2, JSON.stringify(pass)); // the ended run's, the old partial
    t.true(pass.removed.sandboxes >= 1, JSON.stringify(pass));
    t.is(pass.removed.salvage, 1);
    t.true(pass.removed.runEvents > 0, 'the ended run had events');
    t.true(pass.reclaimedBytes.salvage >= 8192);
    t.true(pass.reclaimedBytes.workspaces > 0);

    t.false(existsSync(join(workspaces, ended)), "the ended run's workspace is gone");
    t.false(existsSync(join(dataDir, 'sandboxes', ended)), "the ended run's sandbox directory is gone");
    t.true(existsSync(join(workspaces, running)), "the running run's workspace stays");
    t.true(existsSync(join(dataDir, 'sandboxes', running)), "the running run's sandbox directory stays");
    t.false(existsSync(join(salvage, 'run_old.bundle')));
    t.true(existsSync(join(salvage, 'run_new.bundle')), 'a salvage bundle younger than its retention stays');
    t.false(existsSync(join(workspaces, 'run_gone.partial-run_gone')));
    t.true(existsSync(join(workspaces, 'run_cut.partial-run_cut')), 'a cut that may still be going on stays');
    t.true(existsSync(join(workspaces, 'run_unknown')), 'nothing of a run svc does not know is removed');

    // The run stays, with what analytics need; its output is gone, the running run's is not.
    t.like((await svc.request('GET', `/runs/${ended}`)).body.run, { id: ended, state: 'succeeded' });
    t.deepEqual(await runStdout(svc, ended), []);
    t.true((await runStdout(svc, running)).includes('still here'));

    const metrics = (await svc.request('GET', '/metrics')).text;
    t.regex(metrics, /svc_retention_removed_total\{kind="workspaces"\} [1-9]/);
    t.regex(metrics, /svc_retention_reclaimed_bytes_total\{kind="salvage"\} [1-9]/);

    const ops = await svcCli(['ops', '--output', 'pretty', ...remote(svc)]);
    t.is(ops.code, 0, ops.stderr);
    t.regex(
      ops.stdout,
      /^retention on \S+: last pass \S+, removed \d+ workspaces, \d+ sandbox directories, 1 salvage bundles, /m,
    );
    t.regex(ops.stdout, /MiB given back$/m);

    // A second pass finds nothing more of the ended run: the pass repeats safely.
    const again = await retentionPass(svc);
    t.is(again.removed.salvage, 0);
    t.true(existsSync(join(workspaces, running)));
    await svc.request('POST', `/runs/${running}/cancel`, { body: {} });
  });
}
