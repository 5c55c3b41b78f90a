// Attack: disturb another run through the supervisor both sandboxes share. One agent floods its
// proxies past their connection limit with garbage (HTTP, SOCKS, an oversized header) while its
// neighbour, supervised by the same process, fetches through its own proxy: the neighbour's fetch
// answers, both runs end as their agents did, and the shared supervisor lives on.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { isSameProcessAlive } from '../../platform/processes.ts';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { eventsOf, reported } from './hostile-agent.ts';

let svc: TestStack;
let allowed: { server: Server; url: string };

test.before(async () => {
  const server = createServer((_request, response) => response.end('allowed-answered'));
  allowed = { server, url: await listenOnLoopback(server) };
  svc = await startTestStack({ env: { SVC_SANDBOX_EGRESS: new URL(allowed.url).host } });
});
test.after.always(async () => {
  await svc?.stop();
  await closeServer(allowed?.server);
});

const FLOOD = [
  // More connections than a proxy takes from one sandbox (256), each sending garbage, held a while.
  "for i in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'GARBAGE %s\\r\\n\\r\\n' $i >&3; sleep 8) " +
    '2>/dev/null & done',
  "for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/1080 && printf '\\x05\\xff\\x00\\x07' >&3; sleep 8) " +
    '2>/dev/null & done',
  // A header far past what the proxy reads, and connections cut mid-request.
  "big=$(head -c 200000 /dev/zero | tr '\\0' a)",
  'for i in $(seq 20); do (exec 3<>/dev/tcp/127.0.0.1/3128 && printf "GET http://x/ HTTP/1.1\\r\\nX: %s\\r\\n" ' +
    '"$big" >&3; ' +
    'exec 3>&-) 2>/dev/null & done',
  'for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3128 && printf "CONNECT 10.0.0.1:443 HTTP/1.1\\r\\n" >&3) ' +
    '2>/dev/null ' +
    '& done',
  'wait',
  'echo flood_done=yes',
].join('\n');

test.serial("an agent flooding its proxies leaves its neighbour's proxy answering and the supervisor up", async (t) => {
  const dispatch = async (prompt: string) =>
    (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id as string;
  const attacker = await dispatch(FLOOD);
  const neighbour = await dispatch(
    `sleep 4\necho neighbour=$(env NO_PROXY= no_proxy= curl -s -m 20 ${allowed.url}/neighbour)`,
  );
  const [attackerRun, neighbourRun] = [
    await waitForRunState(svc, attacker, undefined, 120_000),
    await waitForRunState(svc, neighbour),
  ];
  t.is(neighbourRun.state, 'succeeded', JSON.stringify(neighbourRun));
  t.is(reported((await eventsOf(svc, neighbour)).stdout, 'neighbour'), 'allowed-answered');
  t.is(attackerRun.state, 'succeeded', 'the attacker ends as its agent did, not lost');
  t.is(reported((await eventsOf(svc, attacker)).stdout, 'flood_done'), 'yes');
  const supervisor = (id: string) =>
    JSON.parse(readFileSync(join(svc.config.dataDir, 'sandboxes', id, 'supervisor.json'), 'utf8')) as {
      pid: number;
      shared?: boolean;
    };
  t.true(supervisor(attacker).shared);
  t.is(supervisor(attacker).pid, supervisor(neighbour).pid, 'both were supervised by one process');
  t.true(isSameProcessAlive(supervisor(attacker).pid, undefined), 'which the flood did not bring down');
});
