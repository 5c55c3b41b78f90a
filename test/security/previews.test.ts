// Attack: a project's preview is agent-written code served to browsers. It runs in a sandbox like
// the agent's (the run's uid, its own network, no svc credential, nothing of svc's data), and what
// it serves reaches a browser only through svc's proxy, which never hands it svc's cookies.
import test from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

test('a hostile preview sees no secret, no svc data, no API; it is not root', async (t) => {
  const github = new GitHubStandIn();
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  const svc = await startTestStack({ env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
  t.teardown(() => svc.stop());
  // What the preview finds out about its world, served as its page.
  const server = `
import { createServer } from 'node:http';
import { existsSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
const api = await fetch(${JSON.stringify(`${svc.url}/runs`)}, { signal: AbortSignal.timeout(3000) }).then(
  (response) => response.status,
  () => 'unreachable',
);
// Where its door meets svc: a root-owned directory it can neither empty nor plant a link in.
let plant;
try {
  rmSync('/run/svc/net/door.sock');
  symlinkSync('/run/podman/podman.sock', '/run/svc/net/door.sock');
  plant = 'planted';
} catch (error) {
  plant = error.code || String(error.message).slice(0, 100) || 'refused';
}
const seen = {
  plant,
  uid: process.getuid(),
  secrets: Object.keys(process.env).filter((name) => /TOKEN|KEY|SECRET|DATABASE|TEMPORAL/i.test(name)),
  dataDir: existsSync(${JSON.stringify(svc.config.dataDir)}),
  processes: readdirSync('/proc').filter((entry) => /^\\d+$/.test(entry)).length,
  api,
};
createServer((_request, response) => response.end(JSON.stringify(seen)))
  .listen(Number(process.env.PORT), process.env.HOST);
`;
  github.createRepo('acme', 'hostile-preview', {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 8000\n',
      'server.mjs': server,
    },
  });
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/hostile-preview' } })
  ).body.project.id;
  const prompt = 'echo x > x.txt && git add x.txt && git commit -qm x';
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(svc, runId, undefined, 60_000);
  await waitFor(
    async () => (await svc.request('GET', `/runs/${runId}`)).body.run.previewState === 'live',
    'the preview',
    60_000,
  );
  const login = await svc.request('POST', `/runs/${runId}/preview/login`, { body: {} });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const seen = (await (await fetch(login.body.url, { headers: { cookie } })).json()) as Record<string, any>;
  t.not(seen.uid, 0, 'not root');
  t.deepEqual(seen.secrets, [], 'no credential in its environment');
  t.false(seen.dataDir, "svc's data directory is not there");
  t.is(seen.api, 'unreachable', "svc's API is not on its network");
  t.not(seen.plant, 'planted', JSON.stringify(seen));
  t.truthy(seen.plant, `the attempt was made and refused: ${JSON.stringify(seen)}`);
  // Its own process namespace: only the sandbox's few processes.
  t.true(seen.processes > 0 && seen.processes < 20, JSON.stringify(seen));
  await svc.request('POST', `/runs/${runId}/preview/teardown`, { body: {} });
});
