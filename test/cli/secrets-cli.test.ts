// The secrets commands as a user runs them: real `svc` processes against a running server, the
// value on stdin or in a file, never on the command line.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { remote, svcCli } from '../support/cli.ts';
import { startTestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'cli-secrets');

test('secrets set (stdin, file), ls and rm, by owner/repo and id, in ndjson, json and pretty', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/cli-secrets' } }))
    .body.project.id;
  const value = 'cli-secret-7d1e99b2c4';

  const set = await svcCli(['secrets', 'set', 'acme/cli-secrets', 'NPM_TOKEN', ...remote(svc)], {}, `${value}\n`);
  t.is(set.code, 0, set.stderr);
  t.like(set.lines[0], { name: 'NPM_TOKEN', scope: 'run', replaced: false });
  t.false(set.stdout.includes(value));

  const file = join(mkdtempSync(join(tmpdir(), 'svc-secret-')), 'cert.pem');
  writeFileSync(file, 'line one\nline two\n');
  const fromFile = await svcCli([
    'secrets',
    'set',
    project,
    'CERT_PEM',
    '--value-file',
    file,
    '--scope',
    'setup',
    '--output',
    'pretty',
    ...remote(svc),
  ]);
  t.is(fromFile.code, 0, fromFile.stderr);
  t.is(fromFile.stdout.trim(), `secret CERT_PEM of ${project} set (scope setup)`);
  const again = await svcCli(['secrets', 'set', project, 'NPM_TOKEN', ...remote(svc)], {}, 'another-value-1234');
  t.like(again.lines[0], { name: 'NPM_TOKEN', replaced: true });

  const listed = await svcCli(['secrets', 'ls', 'acme/cli-secrets', ...remote(svc)]);
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(
    listed.lines.map(({ name, scope }) => ({ name, scope })),
    [
      { name: 'CERT_PEM', scope: 'setup' },
      { name: 'NPM_TOKEN', scope: 'run' },
    ],
  );
  const json = await svcCli(['secrets', 'ls', project, '--output', 'json', ...remote(svc)]);
  t.is(JSON.parse(json.stdout).length, 2);
  const pretty = await svcCli(['secrets', 'ls', project, '--output', 'pretty', ...remote(svc)]);
  t.regex(pretty.stdout, /^NAME +SCOPE +UPDATED/m);
  for (const output of [listed.stdout, json.stdout, pretty.stdout]) t.false(output.includes(value));

  const removed = await svcCli(['secrets', 'rm', 'acme/cli-secrets', 'NPM_TOKEN', ...remote(svc)]);
  t.is(removed.code, 0, removed.stderr);
  t.deepEqual(removed.lines[0], { name: 'NPM_TOKEN', removed: true });
  const gone = await svcCli(['secrets', 'rm', project, 'NPM_TOKEN', ...remote(svc)]);
  t.is(gone.code, 2);
  t.regex(gone.stderr, /\[not_found\]/);

  // The user's mistakes: usage errors, nothing sent.
  const mistakes: [string[], string | undefined, RegExp][] = [
    [['secrets', 'set', project, 'lower'], 'x', /look like an environment variable/],
    [['secrets', 'set', project, 'SVC_TOKEN'], 'x', /set by svc in the sandbox/],
    [['secrets', 'set', project, 'EMPTY'], '', /the value is empty/],
    [['secrets', 'set', project, 'FROM_FILE', '--value-file', '/nonexistent/file'], undefined, /cannot read/],
    [['secrets', 'set', project, 'SCOPED', '--scope', 'build'], 'x', /scope/],
  ];
  for (const [args, input, message] of mistakes) {
    const refused = await svcCli([...args, ...remote(svc)], {}, input);
    t.is(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
    t.regex(refused.stderr, message);
  }
  const left = await svcCli(['secrets', 'ls', project, ...remote(svc)]);
  t.deepEqual(
    left.lines.map((line) => line.name),
    ['CERT_PEM'],
  );
});
