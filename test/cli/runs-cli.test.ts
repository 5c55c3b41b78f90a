// The runs commands as a person uses them: `svc run` with a project id, owner/repo or none, then
// `svc runs list / show / steer / cancel` in every output mode, against a real stack on SQLite and
// PostgreSQL.
import test from 'ava';
import { remote, svcCli } from '../support/cli.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const github = new GitHubStandIn();
for (const leg of DATABASE_LEGS) github.createRepo('acme', `runs-cli-${leg}`);

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: svc run, runs list, show, steer and cancel`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    // One run at a time: a second one waits, queued, where a shell agent still takes steering.
    const svc = await startTestStack({ database: leg, env: { SVC_MAX_CONCURRENT_RUNS: '1' } });
    t.teardown(() => svc.stop());
    const cli = (...args: string[]) => svcCli([...args, ...remote(svc)]);
    const repo = `acme/runs-cli-${leg}`;
    const project = (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/${repo}` } })).body
      .project.id;

    // --output json: the whole stream as one document.
    const byName = await cli('run', 'shell', repo, '-p', 'cat README.md', '--output', 'json');
    t.is(byName.code, 0, byName.stderr);
    const records = JSON.parse(byName.stdout);
    t.true(Array.isArray(records));
    t.like(records[0], { type: 'run.spawned', run: { projectId: project } });
    t.like(records.at(-1), { type: 'run.terminal', state: 'succeeded' });
    t.true(records.some((record: any) => record.type === 'run.event' && record.payload?.text === `# runs-cli-${leg}`));
    const withProject = records[0].run.id;

    const noProject = await cli('run', 'shell', '-p', 'echo alone', '--output', 'pretty');
    t.is(noProject.code, 0, noProject.stderr);
    t.regex(noProject.stdout, /^run (run_\w+) dispatched: agent shell/);
    t.notRegex(noProject.stdout.split('\n')[0]!, /project/);
    t.regex(noProject.stdout, /^\d\d:\d\d:\d\d alone$/m);
    const alone = /^run (run_\w+)/.exec(noProject.stdout)![1]!;

    const byFlag = await cli('run', 'shell', '--project', project, '-p', 'exit 3');
    t.is(byFlag.code, 1, 'a failed run exits 1');
    t.like(byFlag.lines.at(-1), { type: 'run.terminal', state: 'failed' });
    const failed = byFlag.lines[0].run.id;
    t.is((await cli('run', 'shell', repo, '--project', 'acme/other', '-p', 'x')).code, 2);
    // No prompt: one line saying what is missing, and nothing dispatched.
    const noPrompt = await cli('run', 'shell', repo);
    t.is(noPrompt.code, 2);
    t.is(noPrompt.stderr.split('\n')[0], 'svc: [usage] say what the agent should do: -p, --prompt <text>');
    const unknown = await cli('run', 'shell', 'acme/not-registered', '-p', 'x');
    t.is(unknown.code, 2);
    t.regex(unknown.stderr, /no registered project is acme\/not-registered/);

    // runs list: a table by default, one JSON array, or one run per line.
    const table = await cli('runs', 'list');
    t.is(table.code, 0, table.stderr);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    t.regex(header!, /^ID +STATE +AGENT +PROJECT +CREATED +COST +PROMPT$/);
    t.deepEqual(
      rows.map((row) => row.split(/ +/)[0]),
      [failed, alone, withProject],
      'newest first',
    );
    t.regex(rows[2]!, new RegExp(`succeeded +shell +${repo} `));
    t.regex(rows[1]!, / shell +— /, 'a run without a project');
    const json = await cli('runs', 'list', '--output', 'json');
    t.deepEqual(
      JSON.parse(json.stdout).map((run: any) => run.id),
      [failed, alone, withProject],
    );
    const ndjson = await cli('runs', 'list', '--output', 'ndjson', '--project', repo, '--state', 'failed');
    t.deepEqual(
      ndjson.lines.map((run) => run.id),
      [failed],
    );
    t.is(ndjson.stdout.trim().split('\n').length, 1);
    t.deepEqual(JSON.parse((await cli('runs', 'list', '--agent', 'nobody', '--output', 'json')).stdout), []);
    t.is((await cli('runs', 'list', '--agent', 'nobody')).stdout.trim(), '(no runs)');
    const limited = await cli('runs', 'list', '--limit', '1');
    t.regex(limited.stdout, /showing 1 of 3 runs/);
    const badState = await cli('runs', 'list', '--state', 'done');
    t.is(badState.code, 2);
    t.regex(badState.stderr, /^svc: \[usage\] unknown state done/m);
    t.is((await cli('runs', 'list', '--project', repo, '--agent', 'shell')).code, 2);

    // runs show
    const shown = await cli('runs', 'show', withProject);
    t.is(shown.code, 0, shown.stderr);
    t.regex(shown.stdout, new RegExp(`^run ${withProject}\nstate: +succeeded$`, 'm'));
    t.regex(shown.stdout, new RegExp(`^project: +${repo}$`, 'm'));
    t.regex(shown.stdout, /^prompt:\n {2}cat README.md$/m);
    const shownJson = JSON.parse((await cli('runs', 'show', withProject, '--output', 'json')).stdout);
    t.is(shownJson.run.id, withProject);
    const missing = await cli('runs', 'show', 'run_000000000000');
    t.is(missing.code, 2);
    t.regex(missing.stderr, /^svc: \[not_found\] run "run_000000000000" not found/m);

    // steer a queued run (behind the running one), then cancel both.
    const running = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 300' } })).body.run.id;
    await waitForRunState(svc, running, ['running']);
    const queued = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'cat' } })).body.run.id;
    const steered = await cli('runs', 'steer', queued, 'look left', '--priority', 'high');
    t.is(steered.code, 0, steered.stderr);
    t.regex(steered.stdout, new RegExp(`^message msg_\\w+ queued for run ${queued} \\(high priority\\)$`, 'm'));
    const inbox = await svc.request('GET', `/runs/${queued}/inbox?peek=1`);
    t.like(inbox.body.messages[0], { body: 'look left', priority: 'high' });
    t.is((await cli('runs', 'steer', queued, ' ')).code, 2, 'an empty message');
    const steerEnded = await cli('runs', 'steer', withProject, 'too late');
    t.is(steerEnded.code, 2);
    t.regex(steerEnded.stderr, /^svc: \[\w+\] /);

    const cancelled = await cli('runs', 'cancel', queued, '--reason', 'not now');
    t.is(cancelled.code, 0, cancelled.stderr);
    t.is(cancelled.stdout.trim(), `run ${queued} cancelled`);
    const again = await cli('runs', 'cancel', queued);
    t.is(again.stdout.trim(), `run ${queued} had already ended: cancelled`);
    const cancelJson = JSON.parse((await cli('runs', 'cancel', running, '--output', 'json')).stdout);
    t.like(cancelJson, { alreadyTerminal: false });
    await waitForRunState(svc, running, ['cancelled']);
    t.is((await cli('runs', 'cancel', 'run_000000000000')).code, 2);
  });
}
