// `svc agents` as a person uses it: the server's agents with how each takes steering, as a table or
// as one JSON record per agent; a server that does not answer is one line and exit 3.
import test from 'ava';
import { remote, svcCli } from '../support/cli.ts';
import { startTestStack } from '../support/stack.ts';

test('svc agents lists the agents, their runtime, steering and credentials', async (t) => {
  const svc = await startTestStack({ worker: false });
  t.teardown(() => svc.stop());
  const cli = (...args: string[]) => svcCli([...args, ...remote(svc)]);
  const ndjson = await cli('agents', '--output', 'ndjson');
  t.is(ndjson.code, 0, ndjson.stderr);
  const shell = ndjson.lines.find((agent: { name: string }) => agent.name === 'shell');
  t.deepEqual(shell, {
    name: 'shell',
    runtime: 'command',
    steering: 'spawn-only',
    costBasis: 'api',
    credentials: [],
    source: 'builtin',
    description: shell.description,
  });
  const pretty = await cli('agents', '--output', 'pretty');
  t.is(pretty.code, 0, pretty.stderr);
  t.regex(pretty.stdout, /^NAME +RUNTIME +STEERING +SOURCE +CREDENTIALS$/m);
  t.regex(pretty.stdout, /^claude-code +claude-code +mid-run +builtin +ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN or/m);
  const nowhere = await svcCli(['agents', '--url', 'http://127.0.0.1:9', '--token', 'x']);
  t.is(nowhere.code, 3);
  t.regex(nowhere.stderr, /^svc: \[unreachable\]/);
});
