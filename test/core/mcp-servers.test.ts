// The `mcp` key of .svc/environment.yaml: what a run takes from it, a clear refusal of anything
// else (a bad name, a server both or neither kind, a twice-used name, sizes past their bounds,
// credentials in a URL), the secrets its values name, and their resolution at launch.
import test from 'ava';
import { parseEnvironment } from '../../core/environment.ts';
import {
  mcpEndpoints,
  mcpRefusal,
  MAX_MCP_SERVERS,
  referencedSecrets,
  resolveMcpServers,
  type McpServer,
} from '../../core/mcp-servers.ts';

const refusal = (mcp: string) => {
  const read = parseEnvironment(`setup: x\nmcp:\n${mcp}`);
  return 'invalid' in read ? read.invalid : 'accepted';
};
const servers = (mcp: string): McpServer[] => {
  const read = parseEnvironment(`setup: x\nmcp:\n${mcp}`);
  if ('invalid' in read) throw new Error(read.invalid);
  return read.plan.mcp!;
};

test('a command server and a remote one, as written', (t) => {
  t.deepEqual(
    servers(
      [
        '  - name: files',
        '    command: [node, tools/mcp.js, --root, .]',
        '    env: {LOG_LEVEL: debug, TOKEN: "${secrets.FILES_TOKEN}"}',
        '  - name: issue-tracker',
        '    url: https://mcp.example.com/mcp',
        '    headers: {Authorization: "Bearer ${secrets.TRACKER_TOKEN}"}',
        '',
      ].join('\n'),
    ),
    [
      {
        name: 'files',
        command: ['node', 'tools/mcp.js', '--root', '.'],
        env: { LOG_LEVEL: 'debug', TOKEN: '${secrets.FILES_TOKEN}' },
      },
      {
        name: 'issue-tracker',
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: 'Bearer ${secrets.TRACKER_TOKEN}' },
      },
    ],
  );
  t.false('mcp' in (parseEnvironment('setup: x\n') as { plan: object }).plan, 'no key, no servers');
});

test('every problem is named, with where it is', (t) => {
  t.regex(refusal('  - name: Files\n    command: [x]\n'), /mcp\.0\.name: lower case letters and digits/);
  t.regex(refusal('  - name: a__b\n    command: [x]\n'), /mcp\.0\.name: /, 'a double _ would split a tool name');
  t.regex(refusal(`  - name: ${'a'.repeat(33)}\n    command: [x]\n`), /mcp\.0\.name: /);
  t.regex(refusal('  - name: a\n'), /mcp\.0: either command \(run in the sandbox\) or url/);
  t.regex(refusal('  - name: a\n    command: [x]\n    url: https://a.example\n'), /mcp\.0: either command/);
  t.regex(refusal('  - name: a\n    command: []\n'), /mcp\.0\.command: /);
  t.regex(refusal('  - name: a\n    command: [x]\n    headers: {A: b}\n'), /mcp\.0\.headers: for a url server/);
  t.regex(refusal('  - name: a\n    url: https://a.example\n    env: {A: b}\n'), /mcp\.0\.env: for a command server/);
  t.regex(
    refusal('  - name: a\n    command: [x]\n  - name: a\n    url: https://a.example\n'),
    /mcp\.1\.name: "a" is named twice/,
  );
  t.regex(refusal('  - name: a\n    url: ftp://a.example\n'), /mcp\.0\.url: an http or https URL/);
  t.regex(refusal('  - name: a\n    url: not a url\n'), /mcp\.0\.url: a URL/);
  t.regex(refusal('  - name: a\n    url: https://user:pw@a.example/\n'), /mcp\.0\.url: no credentials in the URL/);
  t.regex(refusal('  - name: a\n    url: https://a.example\n    headers: {"Bad Header": x}\n'), /an HTTP header name/);
  t.regex(
    refusal('  - name: a\n    url: https://a.example\n    headers: {A: "x\\r\\nB: y"}\n'),
    /no NUL or line break/,
  );
  t.regex(refusal('  - name: a\n    command: [x]\n    env: {"1X": y}\n'), /an environment variable name/);
  t.regex(
    refusal('  - name: a\n    command: [x]\n    env: {X: "${secrets.lower}"}\n'),
    /\$\{secrets\.lower\}: not a secret's name/,
  );
  t.regex(refusal('  - name: a\n    command: [x]\n    extra: 1\n'), /mcp\.0: unknown key extra$/);
  t.regex(refusal('  []\n'), /mcp: /);
  const many = Array.from({ length: MAX_MCP_SERVERS + 1 }, (_, i) => `  - {name: s${i}, command: [x]}\n`).join('');
  t.regex(refusal(many), /mcp: /);
  t.regex(refusal(`  - name: a\n    command: [${Array(65).fill('x').join(', ')}]\n`), /mcp\.0\.command: /);
  t.regex(refusal(`  - name: a\n    url: https://a.example/${'p'.repeat(2048)}\n`), /mcp\.0\.url: /);
});

test('the secrets named, the refusals a run gets, and the values put in at launch', (t) => {
  const declared = servers(
    [
      '  - {name: one, command: [x], env: {A: "${secrets.ONE}-${secrets.TWO}"}}',
      '  - {name: two, url: "http://mcp.example.com:8080/x", headers: {B: "${secrets.ONE}"}}',
      '',
    ].join('\n'),
  );
  t.deepEqual(referencedSecrets(declared), ['ONE', 'TWO']);
  t.deepEqual(mcpEndpoints(declared), ['http://mcp.example.com:8080/x']);
  const run = new Map([
    ['ONE', 'run'],
    ['TWO', 'run'],
  ]);
  t.is(mcpRefusal(declared, 'claude-code', run, false), null);
  t.regex(mcpRefusal(declared, 'command', run, false)!, /runtime \(command\) takes no MCP servers/);
  t.regex(
    mcpRefusal(declared, 'codex', new Map([['ONE', 'run']]), false)!,
    /\$\{secrets\.TWO\}: the project has no such/,
  );
  t.regex(
    mcpRefusal(declared, 'opencode', new Map([...run, ['TWO', 'setup']]), false)!,
    /\$\{secrets\.TWO\}: a setup secret; the agent gets only run secrets/,
  );
  t.regex(mcpRefusal(declared, 'codex', run, true)!, /two: the project's sandbox network is none/);
  t.deepEqual(resolveMcpServers(declared, { ONE: '1', TWO: '$2' }), [
    { name: 'one', command: ['x'], env: { A: '1-$2' } },
    { name: 'two', url: 'http://mcp.example.com:8080/x', headers: { B: '1' } },
  ]);
  t.throws(() => resolveMcpServers(declared, { ONE: '1' }), { message: /\$\{secrets\.TWO\} is not one of the run's/ });
});
