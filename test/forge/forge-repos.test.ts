// GET /forge/repos through octokit against a local GitHub REST stand-in.
import test, { type ExecutionContext } from 'ava';
import { GitHubApiStandIn, githubRepo } from '../support/github-api-stand-in.ts';
import { startTestStack } from '../support/stack.ts';

/** A server (no worker) whose forge is the given stand-in, both stopped after the test. */
async function stackAgainst(t: ExecutionContext, api: GitHubApiStandIn) {
  await api.start();
  t.teardown(() => api.stop());
  const svc = await startTestStack({ worker: false, env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: api.url } });
  t.teardown(() => svc.stop());
  return svc;
}

test('without credentials the forge is unsupported', async (t) => {
  const svc = await startTestStack({ worker: false, env: { SVC_GIT_TOKEN: '', GITHUB_TOKEN: '' } });
  t.teardown(() => svc.stop());
  const response = await svc.request('GET', '/forge/repos');
  t.is(response.status, 200);
  t.deepEqual(response.body, { supported: false, repos: [] });
  t.is((await svc.request('GET', '/forge/repos', { token: null })).status, 401);
});

test('with a token it lists every page of the repositories the token sees', async (t) => {
  const api = new GitHubApiStandIn().on((request, url) => {
    if (request.path !== '/user/repos') return undefined;
    if (request.headers.authorization !== 'token ghp_test')
      return { status: 401, body: { message: 'Bad credentials' } };
    const page = Number(url.searchParams.get('page') ?? '1');
    if (page === 1)
      return {
        status: 200,
        body: [githubRepo('acme', 'widget'), githubRepo('acme', 'secret', { private: true, defaultBranch: 'trunk' })],
        headers: { link: `<${api.url}/user/repos?per_page=100&page=2>; rel="next"` },
      };
    return { status: 200, body: [githubRepo('other', 'thing')] };
  });
  const svc = await stackAgainst(t, api);

  const response = await svc.request('GET', '/forge/repos');
  t.is(response.status, 200);
  t.true(response.body.supported);
  t.deepEqual(response.body.repos, [
    {
      owner: 'acme',
      name: 'widget',
      cloneUrl: 'https://github.com/acme/widget.git',
      defaultBranch: 'main',
      private: false,
    },
    {
      owner: 'acme',
      name: 'secret',
      cloneUrl: 'https://github.com/acme/secret.git',
      defaultBranch: 'trunk',
      private: true,
    },
    {
      owner: 'other',
      name: 'thing',
      cloneUrl: 'https://github.com/other/thing.git',
      defaultBranch: 'main',
      private: false,
    },
  ]);
  t.is(api.requests.length, 2);
  t.false(JSON.stringify(api.requests).includes(svc.token), "the operator's token never reaches GitHub");
});

test('a forge that fails is reported, not a 500', async (t) => {
  const api = new GitHubApiStandIn().on(() => ({ status: 500, body: { message: 'boom' } }));
  const svc = await stackAgainst(t, api);
  const response = await svc.request('GET', '/forge/repos');
  t.is(response.status, 200);
  t.true(response.body.supported);
  t.deepEqual(response.body.repos, []);
  t.regex(response.body.error, /boom/);
});
