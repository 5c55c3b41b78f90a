// Registering, refreshing and deleting projects through the API, with real git against local bare
// repositories standing in for GitHub.
import test from 'ava';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'widget');
github.createRepo('acme', 'trunky', { defaultBranch: 'trunk', otherBranches: ['develop'] });

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack();
});
test.after.always(() => svc?.stop());

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: register, read, refresh after an upstream commit, run in the clone, delete`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const stack = leg === 'sqlite' ? svc : await startTestStack({ database: 'postgresql' });
    if (leg !== 'sqlite') t.teardown(() => stack.stop());
    github.createRepo('acme', `lifecycle-${leg}`);

    const created = await stack.request('POST', '/projects', {
      body: { gitUrl: `git@github.com:acme/lifecycle-${leg}.git` },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const project = created.body.project;
    t.regex(project.id, /^prj_[0-9a-z]{12}$/);
    t.is(project.gitUrl, `https://github.com/acme/lifecycle-${leg}`);
    t.is(project.defaultBranch, 'main');
    t.is(project.localPath, join(stack.config.projectsRoot, 'acme', `lifecycle-${leg}`));
    t.true(existsSync(join(project.localPath, 'README.md')));
    t.false(project.hasSeeds);
    t.regex(project.lastHeadSha, /^[0-9a-f]{40}$/);
    t.truthy(project.lastFetchedAt);

    t.deepEqual((await stack.request('GET', `/projects/${project.id}`)).body.project, project);
    t.deepEqual(
      (await stack.request('GET', '/projects')).body.projects.map((p: { id: string }) => p.id).includes(project.id),
      true,
    );

    const upstreamHead = github.commit(
      'acme',
      `lifecycle-${leg}`,
      { '.seeds/issues.jsonl': '', 'src/a.txt': 'a\n' },
      'add seeds',
    );
    const refreshed = await stack.request('POST', `/projects/${project.id}/refresh`);
    t.is(refreshed.status, 200);
    t.is(refreshed.body.headSha, upstreamHead);
    t.is(refreshed.body.ref, 'main');
    t.is(refreshed.body.project.lastHeadSha, upstreamHead);
    t.true(refreshed.body.project.hasSeeds);
    t.true(existsSync(join(project.localPath, 'src', 'a.txt')));

    const { body } = await stack.request('POST', '/runs', {
      body: { agent: 'shell', project: project.id, prompt: 'test -f src/a.txt && git log --oneline | wc -l' },
    });
    const run = await waitForRunState(stack, body.run.id);
    t.is(run.state, 'succeeded', 'the run worked in a clone of the project');
    t.is(run.projectId, project.id);

    const deleted = await stack.request('DELETE', `/projects/${project.id}`);
    t.is(deleted.status, 200);
    t.is(deleted.body.project.id, project.id);
    t.false(existsSync(project.localPath), 'the clone is gone');
    t.is((await stack.request('GET', `/projects/${project.id}`)).status, 404);
    t.is((await stack.request('DELETE', `/projects/${project.id}`)).status, 404);
    t.is((await stack.request('GET', `/runs/${run.id}`)).body.run.id, run.id, 'runs stay as history');
  });
}

test.serial('every accepted URL form registers the same canonical repository', async (t) => {
  for (const form of [
    'https://github.com/acme/widget.git',
    'github.com/acme/widget',
    'ssh://git@github.com/acme/widget',
    'http://github.com/acme/widget/',
  ]) {
    const created = await svc.request('POST', '/projects', { body: { gitUrl: form } });
    t.is(created.status, 201, `${form}: ${JSON.stringify(created.body)}`);
    t.is(created.body.project.gitUrl, 'https://github.com/acme/widget');
    t.is((await svc.request('DELETE', `/projects/${created.body.project.id}`)).status, 200);
  }
});

test.serial('default branch: detected from the remote HEAD, overridable, and a missing one is refused', async (t) => {
  const detected = await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/trunky' } });
  t.is(detected.body.project.defaultBranch, 'trunk');
  await svc.request('DELETE', `/projects/${detected.body.project.id}`);

  const overridden = await svc.request('POST', '/projects', {
    body: { gitUrl: 'https://github.com/acme/trunky', defaultBranch: 'develop' },
  });
  t.is(overridden.status, 201);
  t.is(overridden.body.project.defaultBranch, 'develop');
  t.is(github.git(overridden.body.project.localPath, 'rev-parse', '--abbrev-ref', 'HEAD'), 'develop');
  await svc.request('DELETE', `/projects/${overridden.body.project.id}`);

  const missing = await svc.request('POST', '/projects', {
    body: { gitUrl: 'https://github.com/acme/trunky', defaultBranch: 'nope' },
  });
  t.is(missing.status, 503);
  t.is(missing.body.error.code, 'project_unavailable');
  t.regex(missing.body.error.message, /branch "nope" does not exist/);
  t.false(existsSync(join(svc.config.projectsRoot, 'acme', 'trunky')), 'nothing left behind');
});

test.serial('rejections: bad URLs and duplicates are 400 validation_error and change nothing', async (t) => {
  const before = (await svc.request('GET', '/projects')).body.projects.length;
  for (const gitUrl of [
    'https://user:pw@github.com/acme/widget',
    'https://gitlab.com/acme/widget',
    'https://github.com/acme',
    'https://github.com/-x/widget',
    'not a url',
  ]) {
    const response = await svc.request('POST', '/projects', { body: { gitUrl } });
    t.is(response.status, 400, gitUrl);
    t.is(response.body.error.code, 'validation_error');
    t.truthy(response.body.error.hint);
  }
  for (const body of [
    {},
    { gitUrl: 42 },
    { gitUrl: 'https://github.com/acme/widget', extra: 1 },
    { gitUrl: 'https://github.com/acme/widget', defaultBranch: 'has space' },
  ]) {
    const response = await svc.request('POST', '/projects', { body });
    t.is(response.status, 400, JSON.stringify(body));
  }
  const first = await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/widget' } });
  const duplicate = await svc.request('POST', '/projects', { body: { gitUrl: 'git@github.com:acme/widget.git' } });
  t.is(duplicate.status, 400);
  t.is(duplicate.body.error.message, `project already exists: ${first.body.project.id}`);
  t.is((await svc.request('GET', '/projects')).body.projects.length, before + 1);
  await svc.request('DELETE', `/projects/${first.body.project.id}`);
});

test.serial('a clone that fails is 503 project_unavailable and leaves nothing behind', async (t) => {
  const response = await svc.request('POST', '/projects', {
    body: { gitUrl: 'https://github.com/acme/does-not-exist' },
  });
  t.is(response.status, 503);
  t.is(response.body.error.code, 'project_unavailable');
  t.false(existsSync(join(svc.config.projectsRoot, 'acme', 'does-not-exist')));
  t.false(
    readdirSync(join(svc.config.projectsRoot, 'acme')).some((entry) => entry.startsWith('does-not-exist')),
    'no partial clone',
  );
  t.is(
    (await svc.request('GET', '/projects')).body.projects.filter((p: { gitUrl: string }) =>
      p.gitUrl.endsWith('does-not-exist'),
    ).length,
    0,
  );
});

test.serial('refresh to another ref, refresh of an unknown project, and registration runs as a workflow', async (t) => {
  const { body } = await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/trunky' } });
  const id = body.project.id;
  const develop = await svc.request('POST', `/projects/${id}/refresh`, { body: { ref: 'develop' } });
  t.is(develop.status, 200);
  t.is(develop.body.ref, 'develop');
  t.is(github.git(body.project.localPath, 'rev-parse', '--abbrev-ref', 'HEAD'), 'develop');
  const badRef = await svc.request('POST', `/projects/${id}/refresh`, { body: { ref: 'no-such-branch' } });
  // The caller's mistake, not an outage: 404 (it was 503 until the fuzzer flagged it).
  t.is(badRef.status, 404);
  t.is(badRef.body.error.code, 'not_found');
  t.regex(badRef.body.error.message, /ref "no-such-branch" is neither a branch nor a commit/);
  t.is((await svc.request('POST', '/projects/prj_000000000000/refresh')).status, 404);

  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  t.teardown(() => connection.close());
  const { count } = await new Client({ connection }).workflow.count(`SvcProjectId = '${id}' AND SvcKind = 'project'`);
  t.true(count >= 2, 'register and refresh ran as Temporal workflows');
  await svc.request('DELETE', `/projects/${id}`);
});
