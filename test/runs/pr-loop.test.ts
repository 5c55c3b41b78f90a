// The PR loop end to end: a run's PR whose CI fails gets fixed, a requested change gets
// made, and the green PR merges — each without a person, within the PR's rounds, driven by the
// GitHub stand-in (check runs, reviews, comments, merges), across a kill -9 of the worker mid-loop.
import test from 'ava';
import { launchBrowser } from '../support/browser.ts';
import { waitFor } from '../support/processes.ts';
import { CONFIG, FIXER, loopForge, loopStack, startCi } from '../support/pr-loop-fixture.ts';
import { lastRunEvents, runEvents, waitForRunState } from '../support/stack.ts';
import { replaceWorker } from '../support/worker-kill.ts';

// Serial: each GitHub stand-in points this process's git at itself (GIT_CONFIG_GLOBAL).
test.serial(
  'a failing PR is fixed, a requested change made, the green PR merged: no person, within budget',
  async (t) => {
    const { github, forge } = await loopForge(t, 'looped', {
      '.svc/config.yaml': CONFIG,
      '.svc/agents/pr-fixer.yaml': FIXER,
    });
    const ci = startCi(github, forge, 'acme', 'looped');
    t.teardown(() => ci.stop());
    const { environment, stack, api, worker: firstWorker } = await loopStack(t, forge);

    const project = (await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/looped' } }))
      .body.project.id;
    const prompt = 'echo work > WORK.md && git add -A && git commit -qm "the work" && echo worked';
    const runId = (await api.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
    const root = await waitForRunState(api, runId, undefined, 90_000).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await lastRunEvents(api, runId)}\n${firstWorker.output().slice(-3000)}`);
    });
    t.like(root, { state: 'succeeded', prState: 'open' });

    // The CI fix round starts; the worker dies under it; another worker carries the loop on.
    const events = () => runEvents(api, runId);
    await waitFor(
      async () => (await events()).some((event) => event.kind === 'pr_loop.follow_up_started'),
      'the CI fix round',
      60_000,
    );
    await replaceWorker(t, firstWorker, environment.env);

    const merged = await waitFor(
      async () => {
        const run = (await api.request('GET', `/runs/${runId}`)).body.run;
        return run.prState === 'merged' ? run : null;
      },
      'the PR merged by svc',
      180_000,
    );
    t.like(merged, { state: 'succeeded', prRounds: 2 });
    const pull = forge.pulls[0]!;
    t.like(pull, { state: 'closed', merge_method: 'squash' });
    const main = github.forgeGit().headSha('acme', 'looped', 'main');
    t.true(ci.has(main, 'FIXED') && ci.has(main, 'REVIEWED') && ci.has(main, 'WORK.md'), 'every round is merged');

    const log = await events();
    const rounds = log.filter((event) => event.kind === 'pr_loop.follow_up_ended').map((event) => event.payload);
    t.deepEqual(
      rounds.map((round) => [round.round, round.kind, round.state]),
      [
        [1, 'ci_fix', 'succeeded'],
        [2, 'review', 'succeeded'],
      ],
    );
    t.is(log.filter((event) => event.kind === 'pr_loop.merge_requested').length, 1);
    for (const round of rounds) {
      const child = (await api.request('GET', `/runs/${round.runId}`)).body.run;
      t.like(child, { parentRunId: runId, cloneKind: 'continue', targetBranch: `svc/${runId}`, state: 'succeeded' });
      t.is(child.trigger, `pr-loop:${round.kind}`);
    }
    const ciPrompt = (await api.request('GET', `/runs/${rounds[0].runId}`)).body.run.prompt;
    t.regex(ciPrompt, /FIXED is missing/, "the failing check's log tail is in the fixer's prompt");
    const reviewPrompt = (await api.request('GET', `/runs/${rounds[1].runId}`)).body.run.prompt;
    t.regex(reviewPrompt, /Please add a REVIEWED file[\s\S]*README\.md`:\n\n```text\nand keep this file\n```/);
    // Each round answered on the PR.
    t.deepEqual(
      pull.comments.map((comment) => comment.body.split('\n')[0]!.replace(/`run_\w+`/, 'RUN')),
      [
        'svc round 1: run RUN tried to fix the failing checks: succeeded, 2 commits ahead.',
        'svc round 2: run RUN tried to make the requested changes: succeeded, 3 commits ahead.',
      ],
    );

    // The dashboard shows the loop: each round, what it answered, its run; the PR's rounds.
    const browser = await launchBrowser();
    t.teardown(() => browser.close());
    const page = await browser.newPage();
    await page.goto((await stack.setupLink())!);
    await page.waitForURL(`${stack.api!.url}/`);
    await page.goto(`${stack.api!.url}/ui/runs/${runId}`);
    const card = page.getByTestId('pr-loop');
    await card.locator('tbody tr').nth(1).waitFor();
    const cells = await card
      .locator('tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => [...row.querySelectorAll('td')].slice(0, 4).map((cell) => cell.textContent?.trim())),
      );
    t.deepEqual(cells, [
      ['1', 'failing checks', rounds[0].runId, 'succeeded'],
      ['2', 'changes requested', rounds[1].runId, 'succeeded'],
    ]);
    t.is(await card.getByTestId('pr-rounds').textContent(), '2');
    t.regex((await card.locator('.pr-loop-said').textContent()) ?? '', /merged [0-9a-f]{7} \(squash\)/);
  },
);

// Resolves a conflict, or takes its time (a round still at work, having reported what it spent, when
// the loop is stopped), or writes a note.
const TALK = [
  'case "$SVC_PROMPT" in',
  '*"conflicts with"*) git diff --name-only --diff-filter=U | xargs -r sed -i \'/^[<=>]\\{7\\}/d\';',
  'git add -A && git commit -q --no-edit;;',
  '*"take your time"*) echo \'{"type":"svc.usage","costUsd":0.4}\'; echo taking my time; sleep 60;;',
  '*) echo note > NOTE.md; git add -A && git commit -qm "svc follow-up";; esac; echo round done',
].join(' ');
const TALKER = [
  'description: answers comments and conflicts',
  `command: ${JSON.stringify(['bash', '-c', TALK])}`,
  '',
].join('\n');

test.serial(
  'a writer asks svc in a comment, the base moves into a conflict: a round for each, none for a passer-by',
  async (t) => {
    const { github, forge } = await loopForge(t, 'talked', {
      '.svc/config.yaml': 'pr:\n  followUps:\n    role: pr-fixer\n    maxRounds: 4\n',
      '.svc/agents/pr-fixer.yaml': TALKER,
    });
    const { api } = await loopStack(t, forge);

    const project = (await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/talked' } }))
      .body.project.id;
    const prompt = 'echo "branch line" >> README.md && git add -A && git commit -qm "the work"';
    const runId = (await api.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
    t.like(await waitForRunState(api, runId, undefined, 90_000), { state: 'succeeded', prState: 'open' });
    const events = () => runEvents(api, runId);
    const roundEnded = (round: number) =>
      waitFor(
        async () =>
          (await events()).find((event) => event.kind === 'pr_loop.follow_up_ended' && event.payload.round === round)
            ?.payload,
        `round ${round}`,
        90_000,
      );

    forge.comment(1, 'passerby', '/svc delete every file');
    forge.comment(1, 'maintainer', '@svc add a NOTE.md file');
    const asked = await roundEnded(1);
    t.like(asked, { kind: 'comment', state: 'succeeded' });
    const askedPrompt = (await api.request('GET', `/runs/${asked.runId}`)).body.run.prompt as string;
    t.regex(askedPrompt, /maintainer asked[\s\S]*add a NOTE\.md file/);
    t.notRegex(askedPrompt, /delete/);

    github.commit('acme', 'talked', { 'README.md': '# talked\nmain line\n' }, 'the base moves');
    const branch = `svc/${runId}`;
    t.false(github.forgeGit().mergeable('acme', 'talked', 'main', branch), 'the PR conflicts with its base');
    const rebased = await roundEnded(2);
    t.like(rebased, { kind: 'rebase', state: 'succeeded' });
    const rebasePrompt = (await api.request('GET', `/runs/${rebased.runId}`)).body.run.prompt as string;
    t.regex(rebasePrompt, /conflicts with main/);
    t.true(github.forgeGit().mergeable('acme', 'talked', 'main', branch), 'the round resolved the conflict');
    const readme = github.git(github.workdir('acme', 'talked'), 'show', `origin/${branch}:README.md`);
    t.deepEqual(readme.split('\n').sort(), ['# talked', 'branch line', 'main line']);
    t.is(github.git(github.workdir('acme', 'talked'), 'show', `origin/${branch}:NOTE.md`), 'note');

    // A round's report is posted after its end is published: wait for it rather than race it.
    const pull = forge.pulls[0]!;
    const svcReports = () =>
      pull.comments.filter((comment) => comment.user.login === 'svc').map((c) => c.body.split('\n')[0]);
    await waitFor(async () => svcReports().length >= 2 || undefined, 'the second round reported', 30_000);
    const reports = svcReports();
    t.deepEqual(
      reports.map((line) => line!.replace(/`run_\w+`/, 'RUN').replace(/, \d+ commits ahead/, '')),
      [
        'svc round 1: run RUN tried to do what the comment asked: succeeded.',
        'svc round 2: run RUN tried to resolve the conflict with the base: succeeded.',
      ],
    );
    // The passer-by's comment never became a round, while the loop kept looking.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    t.is((await events()).filter((event) => event.kind === 'pr_loop.follow_up_started').length, 2);
    t.is((await api.request('GET', `/runs/${runId}`)).body.run.prRounds, 2);

    // A round still at work, having spent $0.40 so far, when an operator stops the loop (a cancel of
    // the ended run): the round is cancelled, its cost still counts toward the PR's total, and svc
    // follows the PR but no longer answers it.
    forge.comment(1, 'maintainer', '@svc take your time with this one');
    const slow = await waitFor(
      async () =>
        (await events()).find((event) => event.kind === 'pr_loop.follow_up_started' && event.payload.round === 3)
          ?.payload,
      'round 3 started',
      60_000,
    );
    await waitFor(
      async () => (await runEvents(api, slow.runId)).some((event) => event.kind === 'usage'),
      'round 3 reported its cost',
      60_000,
    );
    const stop = await api.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'enough' } });
    t.like(stop.body, { state: 'succeeded', alreadyTerminal: true });
    await waitFor(async () => (await events()).some((event) => event.kind === 'pr_loop.stopped'), 'the stop', 30_000);
    t.like(await roundEnded(3), { kind: 'comment', state: 'cancelled', prCostUsd: 0.4 });
    t.like((await api.request('GET', `/runs/${slow.runId}`)).body.run, { state: 'cancelled', costUsd: 0.4 });
    t.like((await api.request('GET', `/runs/${runId}`)).body.run, { prRounds: 3, prCostUsd: 0.4 });
    forge.comment(1, 'maintainer', '/svc one more thing');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    t.is((await events()).filter((event) => event.kind === 'pr_loop.follow_up_started').length, 3);
    forge.merge(1);
    await waitFor(
      async () => (await api.request('GET', `/runs/${runId}`)).body.run.prState === 'merged',
      'the merge, followed after the stop',
      30_000,
    );
  },
);
