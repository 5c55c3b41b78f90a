// Steering: messages stored by the run's workflow, folded into the prompt of an agent that has not
// started, claimed mid-run by the agent itself with its per-run token, each delivered once; and
// the per-run token reaching nothing but its own run's callback routes while the run lives.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withProjectLock, projectLockFile } from '../../platform/project-lock.ts';
import { mintRunToken } from '../../core/run-token.ts';
import { waitFor, waitForActivityUnderWay } from '../support/processes.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runEventLines, startTestStack, waitForRunState, type TestStack, runStdout } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'steered');
const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: listener',
    '    command: ["cat"]',
    '    steering: spawn-only',
    '  - name: poller',
    '    steering: mid-run',
    '    command: ["bash", "-c", "echo ready; for i in $(seq 1 100); do out=$(curl -sf -H \\"Authorization: Bearer ' +
      '$SVC_API_TOKEN\\" $SVC_BASE_URL/runs/$SVC_RUN_ID/inbox); case $out in *body*) echo \\"got $out\\"; exit 0;; ' +
      'esac; sleep 0.2; done; exit 1"]',
    '  - name: sleeper',
    '    steering: mid-run',
    '    command: ["sleep", "60"]',
    '  - name: deaf',
    '    command: ["sleep", "30"]',
    '    steering: none',
    // No steering declared: its runtime's (a command agent's is spawn-only).
    '  - name: undeclared',
    '    command: ["sleep", "30"]',
  ].join('\n'),
);

let svc: TestStack;
let projectId: string;
let localPath: string;
test.before(async () => {
  svc = await startTestStack({ env: { SVC_AGENTS_FILE: agentsFile } });
  ({ id: projectId, localPath } = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/steered' } })
  ).body.project);
});
test.after.always(() => svc?.stop());

const stdout = (runId: string) => runStdout(svc, runId);

test.serial(
  'messages sent while a run is queued reach a spawn-only agent with its prompt, most important first',
  async (t) => {
    const [owner, name] = localPath.split('/').slice(-2) as [string, string];
    let runId = '';
    // Hold the project lock: the run cannot cut its workspace, so it stays queued while we steer.
    await withProjectLock(projectLockFile(svc.config.projectsRoot, owner, name), 'exclusive', async () => {
      runId = (
        await svc.request('POST', '/runs', { body: { agent: 'listener', project: projectId, prompt: 'the task' } })
      ).body.run.id;
      // Its start activity waits for the lock to clone: the messages come in while the workspace is
      // cut, and the activity claims them before it launches the agent (activities/start-activities.ts).
      const connection = await Connection.connect({ address: svc.stack.temporalAddress });
      t.teardown(() => connection.close());
      await waitForActivityUnderWay(new Client({ connection }).workflow.getHandle(runId), 'prepareAndStartAgent');
      const low = await svc.request('POST', `/runs/${runId}/steer`, {
        body: { body: 'also tidy up', priority: 'low' },
      });
      t.is(low.status, 200);
      t.like(low.body.message, {
        body: 'also tidy up',
        priority: 'low',
        fromActor: 'operator',
        state: 'unread',
        runId: null,
        deliveredAt: null,
      });
      t.regex(low.body.message.id, /^msg_[0-9a-z]{12}$/);
      await svc.request('POST', `/runs/${runId}/steer`, {
        body: { body: 'stop using tabs', priority: 'urgent', fromActor: 'reviewer' },
      });
      const peek = await waitFor(async () => {
        const response = await svc.request('GET', `/runs/${runId}/inbox?peek=1`);
        return response.body.messages.length === 2 ? response : undefined;
      }, 'both messages in the inbox');
      t.deepEqual(
        peek.body.messages.map((m: { body: string }) => m.body),
        ['stop using tabs', 'also tidy up'],
        'peek lists without claiming, urgent first',
      );
      t.is(
        (await svc.request('GET', `/runs/${runId}/inbox?peek=true`)).body.messages.length,
        2,
        'peeking twice claims nothing',
      );
    });
    await waitForRunState(svc, runId);
    const printed = (await stdout(runId)).join('\n');
    t.regex(printed, /the task[\s\S]*\[urgent\] reviewer: stop using tabs[\s\S]*\[low\] operator: also tidy up/);
    t.deepEqual(
      (await svc.request('GET', `/runs/${runId}/inbox?peek=1`)).body.messages,
      [],
      'delivered messages are gone',
    );
    const late = await svc.request('POST', `/runs/${runId}/steer`, { body: { body: 'too late' } });
    t.is(late.status, 400, 'a terminal run cannot be steered');
  },
);

test.serial('a mid-run agent claims its messages itself with its per-run token, exactly once', async (t) => {
  const runId = (
    await svc.request('POST', '/runs', { body: { agent: 'poller', project: projectId, prompt: 'listen' } })
  ).body.run.id;
  await waitFor(async () => (await stdout(runId)).includes('ready'), 'the agent to start polling');
  const sent = await svc.request('POST', `/runs/${runId}/steer`, {
    body: { body: 'here is your hint', priority: 'high' },
  });
  t.is(sent.status, 200);
  const finished = await waitForRunState(svc, runId);
  t.is(finished.state, 'succeeded');
  const got = (await stdout(runId)).find((line) => line.startsWith('got '))!;
  const claimed = JSON.parse(got.slice(4)).messages;
  t.is(claimed.length, 1);
  t.like(claimed[0], { id: sent.body.message.id, body: 'here is your hint', state: 'delivered', runId });
  t.truthy(claimed[0].deliveredAt);
  const events = (await runEventLines(svc, runId)).join('\n');
  t.regex(events, /"kind":"steer.sent"/);
  t.regex(events, /"kind":"steer.delivered"/);
});

test.serial(
  'a claim with nothing unread leaves no trace in the workflow history; one with a message does',
  async (t) => {
    // `sleeper` is mid-run steerable and never claims: every claim here is the test's.
    const runId = (await svc.request('POST', '/runs', { body: { agent: 'sleeper', project: projectId, prompt: 'x' } }))
      .body.run.id;
    await waitForRunState(svc, runId, ['running']);
    const token = mintRunToken(svc.token, runId);
    const connection = await Connection.connect({ address: svc.stack.temporalAddress });
    t.teardown(() => connection.close());
    const handle = new Client({ connection }).workflow.getHandle(runId);
    const historyLength = async () => (await handle.fetchHistory()).events?.length ?? 0;
    // The read model says running once the agent runs; the workflow supervises it a moment later.
    await waitFor(async () => {
      const { pendingActivities } = (await handle.describe()).raw;
      return pendingActivities?.some((activity) => activity.activityType?.name === 'superviseAgent') || undefined;
    }, 'the workflow supervising the agent');
    const before = await historyLength();
    for (let poll = 0; poll < 10; poll++) {
      const claim = await svc.request('GET', `/runs/${runId}/inbox`, { token });
      t.deepEqual(claim.body, { messages: [] });
    }
    t.is(await historyLength(), before, 'ten empty polls: not one history event');
    await svc.request('POST', `/runs/${runId}/steer`, { body: { body: 'now there is one' } });
    // Claimed once the projection shows it unread (a poll an instant earlier answers nothing).
    const claimed = await waitFor(async () => {
      const { messages } = (await svc.request('GET', `/runs/${runId}/inbox`, { token })).body;
      return messages.length ? messages : undefined;
    }, 'the message claimed');
    t.like(claimed, [{ body: 'now there is one', state: 'delivered' }]);
    t.true((await historyLength()) > before);
    await svc.request('POST', `/runs/${runId}/cancel`);
  },
);

test.serial('steering capability: none is refused; spawn-only is refused once running', async (t) => {
  const deaf = (await svc.request('POST', '/runs', { body: { agent: 'deaf', prompt: 'x' } })).body.run.id;
  const refused = await svc.request('POST', `/runs/${deaf}/steer`, { body: { body: 'hello?' } });
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'state_transition_error');
  await svc.request('POST', `/runs/${deaf}/cancel`);

  const shell = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
  await waitForRunState(svc, shell, ['running']);
  t.is((await svc.request('POST', `/runs/${shell}/steer`, { body: { body: 'hi' } })).status, 409);
  for (const body of [{}, { body: '  ' }, { body: 'x', priority: 'critical' }, { body: 'x', extra: 1 }]) {
    t.is((await svc.request('POST', `/runs/${shell}/steer`, { body })).status, 400, JSON.stringify(body));
  }
  t.is((await svc.request('POST', '/runs/run_000000000000/steer', { body: { body: 'x' } })).status, 404);
  await svc.request('POST', `/runs/${shell}/cancel`);

  // An agent that declares nothing takes its runtime's steering, as GET /agents says.
  const undeclared = (await svc.request('POST', '/runs', { body: { agent: 'undeclared', prompt: 'x' } })).body.run.id;
  await waitForRunState(svc, undeclared, ['running']);
  t.is((await svc.request('GET', '/agents/undeclared')).body.steering, 'spawn-only');
  t.is((await svc.request('POST', `/runs/${undeclared}/steer`, { body: { body: 'hi' } })).status, 409);
  await svc.request('POST', `/runs/${undeclared}/cancel`);
});

test.serial('a per-run token reaches only its own run callback routes, and only while the run lives', async (t) => {
  const a = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
  const b = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
  await waitForRunState(svc, a, ['running']);
  const tokenA = mintRunToken(svc.token, a);
  t.is((await svc.request('GET', `/runs/${a}/inbox?peek=1`, { token: tokenA })).status, 200);
  t.is((await svc.request('GET', `/runs/${a}/inbox`, { token: tokenA })).status, 200);
  const otherRun = await svc.request('GET', `/runs/${b}/inbox?peek=1`, { token: tokenA });
  t.is(otherRun.status, 403);
  t.is(otherRun.body.error.code, 'forbidden');
  for (const [method, path] of [
    ['GET', '/runs'],
    ['GET', `/runs/${a}`],
    ['POST', `/runs/${a}/cancel`],
    ['POST', `/runs/${a}/steer`],
    ['GET', '/projects'],
  ]) {
    t.is(
      (await svc.request(method!, path!, { token: tokenA, body: method === 'POST' ? { body: 'x' } : undefined }))
        .status,
      403,
      `${method} ${path}`,
    );
  }
  t.like(
    (await svc.request('GET', '/whoami', { token: tokenA })).body,
    { identity: 'run', runId: a },
    'it may ask who it is',
  );
  const forged = `svc1.${a}.${'0'.repeat(64)}`;
  t.is((await svc.request('GET', `/runs/${a}/inbox?peek=1`, { token: forged })).status, 401);
  t.is(
    (await svc.request('GET', `/runs/${a}/inbox?peek=1`, { token: mintRunToken('another-operator-token', a) })).status,
    401,
  );
  await svc.request('POST', `/runs/${a}/cancel`);
  const ended = await svc.request('GET', `/runs/${a}/inbox?peek=1`, { token: tokenA });
  t.is(ended.status, 401, 'the token dies with its run');
  t.regex(ended.headers.get('www-authenticate') ?? '', /Bearer/);
  t.is((await svc.request('GET', `/runs/${a}/inbox`)).status, 200, 'the operator may still read a terminal run inbox');
  await svc.request('POST', `/runs/${b}/cancel`);
  t.deepEqual((await svc.request('GET', '/whoami')).body, {
    identity: 'operator',
    capabilities: ['readPublic', 'readOperator', 'dispatch', 'admin'],
  });
});

test.serial('a sandbox salvages its own work: the bundle is kept and the run records it', async (t) => {
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  const token = mintRunToken(svc.token, runId);
  const repo = mkdtempSync(join(tmpdir(), 'svc-salvage-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
  git('init', '-q');
  git('-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'rescued work');
  git('bundle', 'create', 'work.bundle', 'HEAD');
  const bundleBase64 = readFileSync(join(repo, 'work.bundle')).toString('base64');
  const envelope = {
    version: 1,
    trigger: 'push_failed',
    rescueRef: null,
    bundleBase64,
    branch: `svc/${runId}`,
    baseBranch: 'main',
    notes: ['push refused'],
  };

  const stored = await svc.request('POST', `/runs/${runId}/salvage`, { token, body: envelope });
  t.is(stored.status, 200);
  t.deepEqual(stored.body, { stored: true, rescueRef: null });
  const run = await waitFor(async () => {
    const current = (await svc.request('GET', `/runs/${runId}`)).body.run;
    return current.salvagePath ? current : undefined;
  }, 'the run to record the salvage');
  t.deepEqual(readFileSync(run.salvagePath), readFileSync(join(repo, 'work.bundle')));
  t.is((await svc.request('POST', `/runs/${runId}/salvage`, { token, body: envelope })).status, 200, 'idempotent');
  t.is(
    (
      await svc.request('POST', `/runs/${runId}/salvage`, {
        token,
        body: { ...envelope, bundleBase64: Buffer.from('not a bundle').toString('base64') },
      })
    ).status,
    400,
  );
  t.is(
    (await svc.request('POST', `/runs/${runId}/salvage`, { token, body: { ...envelope, trigger: 'whatever' } })).status,
    400,
  );
  await svc.request('POST', `/runs/${runId}/cancel`);
});
