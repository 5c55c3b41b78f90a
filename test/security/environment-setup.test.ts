// Attack: a repository's environment setup (.svc/environment.yaml) is repository content, as
// hostile as an agent. It runs in the agent's sandbox under the agent's uid: it finds no svc
// credential, no callback route, not svc's data directory, and it is neither root nor svc's uid.
import test from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
const FORGE_TOKEN = 'ghp_operatorsforgetoken0123456789abcdefgh';
let svc: TestStack;

test.before(async () => {
  await forge.start();
  svc = await startTestStack({ env: { SVC_GIT_TOKEN: FORGE_TOKEN, SVC_GITHUB_API_URL: forge.url } });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

test.serial('a hostile setup finds no credential, no route to svc and none of its files', async (t) => {
  const dataDir = svc.config.dataDir;
  github.createRepo('acme', 'hostile-setup', {
    files: {
      '.svc/environment.yaml': [
        'setup: |',
        '  echo "uid=$(id -u)"',
        '  echo "secrets=$(env | grep -c -E "ghp_|SVC_API_TOKEN|SVC_BASE_URL|GIT_TOKEN|DATABASE_URL")"',
        `  echo "datadir=$(ls ${dataDir} 2>/dev/null | wc -l)"`,
        '  echo "callback=${SVC_BASE_URL:-none}"',
        '',
      ].join('\n'),
    },
  });
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/hostile-setup' } })
  ).body.project.id;
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'true' } })).body.run
    .id as string;
  await waitForRunState(svc, runId, undefined, 120_000);
  const events = await runEvents(svc, runId);
  const said = (name: string) =>
    events
      .filter((event) => event.kind === 'environment.log')
      .map((event) => event.payload.text as string)
      .find((text) => text.startsWith(`${name}=`))
      ?.slice(name.length + 1);
  t.not(said('uid'), '0', 'the setup is not root');
  t.not(said('uid'), String(process.getuid?.()), "nor svc's own uid");
  t.is(said('secrets'), '0');
  t.is(said('datadir'), '0', "svc's data directory is not in the sandbox");
  t.is(said('callback'), 'none', 'the setup has no route to svc');
  t.false(JSON.stringify(events).includes(FORGE_TOKEN));
  t.false(JSON.stringify(events).includes(svc.token));
});
