import test from 'ava';
import {
  blockingProblem,
  loadSvcConfig,
  migrateLegacyDefaults,
  scaffoldFiles,
  type ConfigProblemCode,
  type SvcConfigFiles,
} from '../../core/svc-config.ts';

const none: SvcConfigFiles = { config: null, legacyDefaults: null, triggers: null, preview: null };

test('no files: everything null, no problems', (t) => {
  t.deepEqual(loadSvcConfig(none), { triggers: null, defaults: null, sourceFile: null, errors: [], warnings: [] });
});

test('valid files load, preview.yaml wins over a nested preview', (t) => {
  const loaded = loadSvcConfig({
    ...none,
    config:
      'defaultRole: shell\nrunBranchPrefix: bots\nmaxCostUsd: 2.5\npreview: {type: server, command: "npm start", ' +
      'port: 3000}\n',
    preview: 'preview:\n  type: server\n  command: "npm run dev"\n  port: 5173\n  connect_timeout: 30s\n',
    triggers:
      '- id: nightly\n  kind: cron\n  cron: "0 3 * * *"\n  timezone: Europe/Paris\n  role: shell\n  prompt: tidy up\n',
  });
  t.deepEqual(loaded.errors, []);
  t.is(loaded.sourceFile, '.svc/config.yaml');
  t.is(loaded.defaults?.defaultRole, 'shell');
  t.is(loaded.defaults?.preview?.command, 'npm run dev');
  t.is(loaded.triggers?.[0]?.id, 'nightly');
});

const broken: [string, Partial<SvcConfigFiles>, ConfigProblemCode, RegExp][] = [
  ['YAML syntax', { config: 'defaultRole: [unclosed' }, 'svc_config_parse_error', /./],
  ['an unknown key', { config: 'defaultRole: shell\nsurprise: 1\n' }, 'svc_config_schema_error', /surprise/],
  ['a bad branch prefix', { config: 'runBranchPrefix: Has Spaces\n' }, 'svc_config_schema_error', /runBranchPrefix/],
  ['a non-positive cap', { config: 'maxCostUsd: 0\n' }, 'svc_config_schema_error', /maxCostUsd/],
  [
    'a protected path with ..',
    { config: 'pr: {autoMerge: {protectedPaths: ["../etc"]}}\n' },
    'svc_config_schema_error',
    /protectedPaths/,
  ],
  [
    'a quality gate (no review round holds a PR)',
    { config: 'qualityGate: {role: reviewer}\n' },
    'svc_config_schema_error',
    /qualityGate: not supported: svc does not hold a PR/,
  ],
  [
    'a remote tracker (seeds are read from .seeds/)',
    { config: 'tracker: {url: "https://tracker.example/api"}\n' },
    'svc_config_schema_error',
    /tracker: not supported: svc reads seeds and plans from the repository's .seeds\/ files/,
  ],
  ['a blank repoContext', { config: 'repoContext: ""\n' }, 'svc_config_schema_error', /repoContext/],
  [
    'a repoContext past 8192 characters',
    { config: `repoContext: ${'x'.repeat(8193)}\n` },
    'svc_config_schema_error',
    /repoContext/,
  ],
  ['JSON syntax in defaults.json', { legacyDefaults: '{"defaultRole":' }, 'svc_config_parse_error', /./],
  [
    'a 4-field cron',
    { triggers: '- {id: a, kind: cron, cron: "* * * *", role: shell}\n' },
    'svc_config_schema_error',
    /cron/,
  ],
  [
    'a duplicate trigger id',
    {
      triggers:
        '- {id: a, kind: cron, cron: "* * * * *", role: shell}\n- {id: a, kind: cron, cron: "0 * * * *", role: ' +
        'shell}\n',
    },
    'svc_config_schema_error',
    /duplicate trigger id/,
  ],
  [
    'an unknown time zone',
    { triggers: '- {id: a, kind: cron, cron: "* * * * *", role: shell, timezone: Mars/Olympus}\n' },
    'svc_config_schema_error',
    /timezone/,
  ],
  [
    'a bad preview port',
    { preview: 'preview: {type: server, command: x, port: 70000}\n' },
    'svc_config_schema_error',
    /port/,
  ],
  [
    'a bad duration',
    { preview: 'preview: {type: server, command: x, port: 80, idle_ttl: soon}\n' },
    'svc_config_schema_error',
    /idle_ttl/,
  ],
];

for (const [name, files, code, message] of broken) {
  test(`reports ${name} as ${code}`, (t) => {
    const loaded = loadSvcConfig({ ...none, ...files });
    t.is(loaded.errors.length, 1);
    t.is(loaded.errors[0]!.code, code);
    t.regex(loaded.errors[0]!.message, message);
  });
}

test('only a broken config.yaml or defaults.json blocks dispatch', (t) => {
  t.truthy(blockingProblem(loadSvcConfig({ ...none, config: 'x: [' })));
  t.falsy(blockingProblem(loadSvcConfig({ ...none, triggers: 'x: [' })));
});

test('defaults.json is deprecated, and ignored beside config.yaml', (t) => {
  t.deepEqual(
    loadSvcConfig({ ...none, legacyDefaults: '{"defaultRole":"shell"}' }).warnings.map((w) => w.code),
    ['svc_config_deprecated'],
  );
  const both = loadSvcConfig({ ...none, config: 'defaultRole: a\n', legacyDefaults: '{"defaultRole":"b"}' });
  t.is(both.defaults?.defaultRole, 'a');
  t.is(both.warnings.length, 1);
});

test('scaffold and migration produce files that load cleanly', (t) => {
  const scaffold = scaffoldFiles('shell');
  t.deepEqual(
    loadSvcConfig({ ...none, config: scaffold['.svc/config.yaml']!, triggers: scaffold['.svc/triggers.yaml']! }).errors,
    [],
  );
  t.is(loadSvcConfig({ ...none, config: scaffold['.svc/config.yaml']! }).defaults?.defaultRole, 'shell');
  const migrated = migrateLegacyDefaults(
    '{"defaultRole":"shell","preview":{"type":"server","command":"npm start","port":3000}}',
  );
  t.true('files' in migrated);
  if ('files' in migrated) {
    const loaded = loadSvcConfig({
      ...none,
      config: migrated.files['.svc/config.yaml']!,
      preview: migrated.files['.svc/preview.yaml']!,
    });
    t.deepEqual(loaded.errors, []);
    t.is(loaded.defaults?.preview?.port, 3000);
    t.is(loaded.defaults?.defaultRole, 'shell');
  }
});
