// Attack: reach the control plane over the network. The agent has its own network namespace; its
// only ways out are svc's proxies, which admit the allowlist (here: one loopback service the
// operator added) and refuse Temporal, PostgreSQL, other loopback services, cloud metadata and
// private ranges, each refusal a run event. svc's API is reachable only as the run's own
// callback routes, so a stolen operator token is of no use from inside.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { suiteTemporalAddress } from '../support/env.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { probe, reported, runAttack } from './hostile-agent.ts';

let svc: TestStack;
let allowed: { server: Server; url: string };
let other: { server: Server; url: string };
const hits: string[] = [];

async function httpServer(name: string) {
  const server = createServer((request, response) => {
    hits.push(`${name} ${request.url}`);
    response.end(`${name}-answered`);
  });
  return { server, url: await listenOnLoopback(server) };
}

test.before(async () => {
  allowed = await httpServer('allowed');
  other = await httpServer('other');
  svc = await startTestStack({ env: { SVC_SANDBOX_EGRESS: new URL(allowed.url).host } });
});
test.after.always(async () => {
  await svc?.stop();
  await closeServer(allowed?.server);
  await closeServer(other?.server);
});

test.serial('egress goes only where the allowlist says; every refusal is a run event', async (t) => {
  const temporal = suiteTemporalAddress();
  const [temporalHost, temporalPort] = temporal.split(':');
  const api = new URL(svc.url);
  const prompt = [
    // A client that uses the proxy, and one that ignores it, to an allowlisted loopback service.
    `echo allowed_proxied=$(env NO_PROXY= no_proxy= curl -s -m 5 ${allowed.url}/proxied)`,
    `echo allowed_direct=$(curl -s -m 5 --noproxy '*' ${allowed.url}/direct)`,
    probe('other_loopback', `env NO_PROXY= no_proxy= curl -sf -m 5 ${other.url}/`),
    probe('other_loopback_direct', `curl -sf -m 5 --noproxy '*' ${other.url}/`),
    // NO_PROXY (loopback is the sandbox's own) would send these straight to the sandbox's loopback.
    probe('temporal_proxy', `env NO_PROXY= no_proxy= curl -sf -m 5 -p -x http://127.0.0.1:3128 http://${temporal}/`),
    probe('temporal_direct', `bash -c 'echo > /dev/tcp/${temporalHost}/${temporalPort}'`),
    probe('postgres_proxy', 'env NO_PROXY= no_proxy= curl -sf -m 5 -p -x http://127.0.0.1:3128 http://127.0.0.1:5432/'),
    probe(
      'postgres_socks',
      'env NO_PROXY= no_proxy= curl -sf -m 5 --socks5-hostname 127.0.0.1:1080 http://127.0.0.1:5432/',
    ),
    probe('api_direct', `curl -sf -m 5 --noproxy '*' ${svc.url}/healthz`),
    probe('api_proxy', `env NO_PROXY= no_proxy= curl -sf -m 5 -x http://127.0.0.1:3128 http://${api.host}/healthz`),
    probe('metadata', 'curl -sf -m 5 http://169.254.169.254/latest/meta-data/'),
    probe('private', 'curl -sf -m 5 --socks5-hostname 127.0.0.1:1080 http://10.1.2.3/'),
    probe('loopback_by_name', `env NO_PROXY= no_proxy= curl -sf -m 5 http://localhost:${new URL(other.url).port}/`),
    probe('public_unlisted', 'curl -sf -m 5 https://example.com/'),
    // The stolen operator token, sent through the only door to svc: refused, and not even passed on.
    `echo whoami=$(curl -s -m 5 -H "Authorization: Bearer ${svc.token}" $SVC_BASE_URL/whoami | head -c 200)`,
    `echo runs=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${svc.token}" ` +
      `$SVC_BASE_URL/runs)`,
    'echo inbox=$(curl -s -m 5 -o /dev/null -w "%{http_code}" "$SVC_BASE_URL/runs/$SVC_RUN_ID/inbox?peek=1")',
  ].join('\n');
  const { run, stdout, events } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is(reported(stdout, 'allowed_proxied'), 'allowed-answered', 'the allowlisted service answers through the proxy');
  t.is(reported(stdout, 'allowed_direct'), 'allowed-answered', 'and to a client that skips proxies for loopback');
  for (const attempt of [
    'other_loopback',
    'other_loopback_direct',
    'temporal_proxy',
    'temporal_direct',
    'postgres_proxy',
    'postgres_socks',
    'api_direct',
    'api_proxy',
    'metadata',
    'private',
    'loopback_by_name',
    'public_unlisted',
  ]) {
    t.is(reported(stdout, attempt), 'no', `${attempt} got through`);
  }
  t.false(
    hits.some((hit) => hit.startsWith('other')),
    'the unlisted loopback service never saw a request',
  );
  t.regex(reported(stdout, 'whoami') ?? '', /forbidden/);
  t.is(reported(stdout, 'runs'), '403');
  t.is(reported(stdout, 'inbox'), '200', "the run's own callback route works, without any token in the sandbox");
  const refused = events
    .filter((event) => event.kind === 'sandbox.egress_refused')
    .map((event) => `${event.payload.protocol} ${event.payload.destination} ${event.payload.reason}`);
  for (const expected of [
    /127\.0\.0\.1:5432 not_allowlisted/,
    /169\.254\.169\.254:80 not_allowlisted/,
    /10\.1\.2\.3:80 not_allowlisted/,
    new RegExp(`${temporal.replace(/\./g, '\\.')} not_allowlisted`),
    /callback GET \/whoami not_a_callback_route/,
  ]) {
    t.true(
      refused.some((line) => expected.test(line)),
      `no refusal event matching ${expected}: ${refused.join('; ')}`,
    );
  }
});

test.serial(
  "svc's own programs start without the environment proxy; the agent's Node still goes through it",
  async (t) => {
    const prompt = [
      'echo env_proxy=$NODE_USE_ENV_PROXY',
      // The init started the agent: its command line, as the kernel has it.
      "echo init_flag=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | grep -c -- '^--no-use-env-proxy$')",
      "echo init_program=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | grep -c 'init.mjs$')",
      // Through the proxy an unlisted private address is refused, and reported; straight, it has no route.
      'node -e "fetch(\'http://10.9.8.7/node\').catch(() => {})"',
    ].join('\n');
    const { run, stdout, events } = await runAttack(svc, prompt);
    t.is(run.state, 'succeeded', JSON.stringify(run));
    t.is(reported(stdout, 'env_proxy'), '1', "the agent's environment keeps NODE_USE_ENV_PROXY");
    t.is(reported(stdout, 'init_program'), '1', "the agent's parent is svc's init");
    t.is(reported(stdout, 'init_flag'), '1', 'the init was told to leave the environment proxy alone');
    t.true(
      events.some(
        (event) => event.kind === 'sandbox.egress_refused' && /10\.9\.8\.7:80/.test(String(event.payload.destination)),
      ),
      "the agent's fetch went to svc's proxy, which refused it and said so",
    );
  },
);
