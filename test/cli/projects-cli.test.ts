// The projects commands as a user runs them: real `svc` processes against a running server.
import test from 'ava';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { remote, svcCli } from '../support/cli.ts';
import { startTestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'cli-one');
github.createRepo('acme', 'cli-two');
for (const leg of DATABASE_LEGS)
  github.createRepo('acme', `cli-legacy-${leg}`, { files: { '.svc/defaults.json': '{"defaultRole":"shell"}' } });

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: add-project and projects, in ndjson and pretty`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({ database: leg, worker: true });
    t.teardown(() => svc.stop());

    const empty = await svcCli(['projects', '--output', 'pretty', ...remote(svc)]);
    t.is(empty.code, 0);
    t.is(empty.stdout.trim(), '(no projects registered)');

    const added = await svcCli(['add-project', 'git@github.com:acme/cli-one.git', ...remote(svc)]);
    t.is(added.code, 0, added.stderr);
    t.is(added.lines.length, 1);
    t.like(added.lines[0], { ok: true, project: { gitUrl: 'https://github.com/acme/cli-one', defaultBranch: 'main' } });
    t.deepEqual(Object.keys(added.lines[0].project).sort(), ['addedAt', 'defaultBranch', 'gitUrl', 'id', 'localPath']);
    const second = await svcCli([
      'add-project',
      'https://github.com/acme/cli-two',
      '--default-branch',
      'main',
      ...remote(svc),
    ]);
    t.is(second.code, 0);

    const listed = await svcCli(['projects', ...remote(svc)]);
    t.is(listed.code, 0);
    t.deepEqual(
      listed.lines.map((line) => line.gitUrl),
      ['https://github.com/acme/cli-one', 'https://github.com/acme/cli-two'],
    );
    t.deepEqual(Object.keys(listed.lines[0]).sort(), ['defaultBranch', 'gitUrl', 'id']);
    const pretty = await svcCli(['projects', '--output', 'pretty', ...remote(svc)]);
    t.regex(pretty.stdout, /^ID +GIT URL +BRANCH/m);
    t.regex(pretty.stdout, /cli-two/);

    const duplicate = await svcCli(['add-project', 'https://github.com/acme/cli-one', ...remote(svc)]);
    t.is(duplicate.code, 2);
    t.regex(duplicate.stderr, /^svc: \[validation_error\] project already exists: prj_/m);
    const badUrl = await svcCli(['add-project', 'https://gitlab.com/acme/x', ...remote(svc)]);
    t.is(badUrl.code, 2);
    t.regex(badUrl.stderr, /hint: /);
  });
}

test('svc -V (the reference flag), -v and --version print the version and exit 0', async (t) => {
  const { SVC_VERSION } = await import('../../platform/version.ts');
  for (const flag of ['-V', '-v', '--version']) {
    const result = await svcCli([flag]);
    t.is(result.code, 0, flag);
    t.is(result.stdout.trim(), SVC_VERSION, flag);
  }
});

test.serial('exit codes: 3 unreachable, 4 refused token, 2 usage; and where the client finds its server', async (t) => {
  const svc = await startTestStack({ worker: false });
  t.teardown(() => svc.stop());
  const unreachable = await svcCli(['projects', '--url', 'http://127.0.0.1:9']);
  t.is(unreachable.code, 3);
  t.regex(unreachable.stderr, /svc: \[unreachable\]/);
  const refused = await svcCli(['projects', '--url', svc.url, '--token', 'wrong']);
  t.is(refused.code, 4);
  t.regex(refused.stderr, /svc: \[unauthorized\]/);
  t.is((await svcCli(['projects', '--output', 'yaml'])).code, 2);
  t.is((await svcCli(['add-project'])).code, 2);
  t.is((await svcCli(['no-such-command'])).code, 2);

  // Environment beats the config file; flags beat the environment.
  const configFile = join(mkdtempSync(join(tmpdir(), 'svc-client-')), 'client.json');
  writeFileSync(configFile, JSON.stringify({ url: svc.url, token: svc.token }));
  t.is((await svcCli(['projects'], { SVC_CLIENT_CONFIG: configFile })).code, 0, 'the config file alone is enough');
  t.is(
    (await svcCli(['projects'], { SVC_CLIENT_CONFIG: configFile, SVC_API_TOKEN: 'wrong' })).code,
    4,
    'SVC_API_TOKEN beats the file',
  );
  t.is(
    (await svcCli(['projects', `--token=${svc.token}`], { SVC_CLIENT_CONFIG: configFile, SVC_API_TOKEN: 'wrong' }))
      .code,
    0,
    '--token beats SVC_API_TOKEN',
  );
  t.is((await svcCli(['projects'], { SVC_BASE_URL: svc.url, SVC_API_TOKEN: svc.token })).code, 0);
});

for (const leg of DATABASE_LEGS)
  test.serial(`${leg}: init and config migrate, locally (--cwd) and on the server (--project)`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({ database: leg });
    t.teardown(() => svc.stop());
    const repo = mkdtempSync(join(tmpdir(), 'svc-init-'));

    const init = await svcCli(['init', '--cwd', repo, '--default-role', 'shell', ...remote(svc)]);
    t.is(init.code, 0, init.stderr);
    t.deepEqual(init.lines[0], {
      ok: true,
      scaffolded: { root: repo, files: ['.svc/triggers.yaml', '.svc/config.yaml'], defaultRole: 'shell' },
    });
    t.regex(readFileSync(join(repo, '.svc', 'config.yaml'), 'utf8'), /defaultRole: shell/);
    const again = await svcCli(['init', '--cwd', repo, ...remote(svc)]);
    t.is(again.code, 2);
    t.regex(again.stderr, /refusing to overwrite/);
    t.is((await svcCli(['init', '--cwd', repo, '--project', 'prj_x', ...remote(svc)])).code, 2);
    const unknownRole = await svcCli([
      'init',
      '--cwd',
      mkdtempSync(join(tmpdir(), 'svc-init-')),
      '--default-role',
      'nobody',
      ...remote(svc),
    ]);
    t.is(unknownRole.code, 2);
    t.regex(unknownRole.stderr, /unknown agent "nobody"/);

    const legacyDir = mkdtempSync(join(tmpdir(), 'svc-legacy-'));
    mkdirSync(join(legacyDir, '.svc'));
    writeFileSync(
      join(legacyDir, '.svc', 'defaults.json'),
      JSON.stringify({ defaultRole: 'shell', preview: { type: 'server', command: 'npm start', port: 3000 } }),
    );
    const migrated = await svcCli(['config', 'migrate', '--cwd', legacyDir]);
    t.is(migrated.code, 0, migrated.stderr);
    t.deepEqual(migrated.lines[0].migrated.files.sort(), ['.svc/config.yaml', '.svc/preview.yaml']);
    t.false(existsSync(join(legacyDir, '.svc', 'defaults.json')));
    t.regex(readFileSync(join(legacyDir, '.svc', 'preview.yaml'), 'utf8'), /port: 3000/);
    t.is((await svcCli(['config', 'migrate', '--cwd', legacyDir])).code, 2, 'nothing left to migrate');

    const project = (
      await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/cli-legacy-${leg}` } })
    ).body.project;
    const serverMigrate = await svcCli(['config', 'migrate', '--project', project.id, ...remote(svc)]);
    t.is(serverMigrate.code, 0, serverMigrate.stderr);
    t.true(existsSync(join(project.localPath, '.svc', 'config.yaml')));
    const serverInit = await svcCli(['init', '--project', project.id, ...remote(svc)]);
    t.is(serverInit.code, 2, 'config.yaml now exists: init refuses');
    t.regex(serverInit.stderr, /refusing to overwrite/);
  });
