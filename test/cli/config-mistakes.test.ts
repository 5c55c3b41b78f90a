// A configuration mistake stops `svc serve` / `svc worker` before anything starts: one line on
// stderr naming the file or variable, the field and what it may hold; exit code 2; no stack
// trace; no data directory, Temporal server or database created.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/free-port.ts';

const scratch = mkdtempSync(join(tmpdir(), 'svc-config-mistakes-'));
const file = (name: string, text: string) => {
  writeFileSync(join(scratch, name), text);
  return join(scratch, name);
};
const unknownRuntime = file(
  'unknown-runtime.yaml',
  'agents:\n  - name: helper\n    runtime: klaude\n    command: [x]\n',
);
const notYaml = file('not-yaml.yaml', 'agents: [\n  - name\n');
const unknownField = file('unknown-field.yaml', 'agents:\n  - name: helper\n    command: [x]\n    comand: [y]\n');

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runSvc(args: string[], env: Record<string, string>): Promise<Outcome> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'SVC_API_TOKEN', 'SVC_TASK_QUEUE', 'SVC_AGENTS_FILE'])
    delete base[name];
  const child = spawn(process.execPath, ['--no-warnings', 'cli/main.ts', ...args], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const mistakes: { title: string; command: 'serve' | 'worker'; env: Record<string, string>; line: RegExp }[] = [
  {
    title: 'an agents file with an unknown runtime',
    command: 'serve',
    env: { SVC_AGENTS_FILE: unknownRuntime },
    line: new RegExp(
      String.raw`^svc: configuration error: SVC_AGENTS_FILE \S+unknown-runtime\.yaml: agents\[0\]\.runtime: ` +
        String.raw`"klaude" is not allowed \(allowed: command, claude-code, codex, opencode, acp\)$`,
    ),
  },
  {
    title: 'an agents file with a misspelt field',
    command: 'worker',
    env: { SVC_AGENTS_FILE: unknownField },
    line: /^svc: configuration error: SVC_AGENTS_FILE \S+unknown-field\.yaml: agents\[0\]: unknown field\(s\) comand$/,
  },
  {
    title: 'an agents file that is not YAML',
    command: 'serve',
    env: { SVC_AGENTS_FILE: notYaml },
    line: /^svc: configuration error: SVC_AGENTS_FILE \S+not-yaml\.yaml: not valid YAML: .+$/,
  },
  {
    title: 'an agents file that is not there',
    command: 'worker',
    env: { SVC_AGENTS_FILE: join(scratch, 'missing.yaml') },
    line: /^svc: configuration error: SVC_AGENTS_FILE \S+missing\.yaml: cannot be read \(ENOENT\)$/,
  },
  {
    title: 'an unknown sandbox backend',
    command: 'worker',
    env: { SVC_SANDBOX: 'chroot' },
    line: new RegExp(
      '^svc: configuration error: SVC_SANDBOX must be auto, bubblewrap, container, kubernetes or process, ' +
        'not "chroot"$',
    ),
  },
  {
    title: 'a port that is no port',
    command: 'serve',
    env: { SVC_PORT: '70000' },
    line: /^svc: configuration error: SVC_PORT must be a port \(0-65535\), got "70000"$/,
  },
  {
    title: "the embedded Temporal's port",
    command: 'serve',
    env: { SVC_TEMPORAL_PORT: 'seven' },
    line: /^svc: configuration error: SVC_TEMPORAL_PORT must be a port \(1-65535\), not "seven"$/,
  },
  {
    title: 'a database URL of another kind',
    command: 'serve',
    env: { DATABASE_URL: 'mysql://svc@db/svc' },
    line: new RegExp(
      String.raw`^svc: configuration error: DATABASE_URL: mysql:// is not supported ` +
        String.raw`\(allowed: postgres://, postgresql:// or a SQLite file path\)$`,
    ),
  },
  {
    title: 'a GitHub App key file that is not there (the value is not echoed)',
    command: 'serve',
    env: { SVC_GITHUB_APP_ID: '12', SVC_GITHUB_APP_PRIVATE_KEY: join(scratch, 'key-file.pem') },
    line: /^svc: configuration error: SVC_GITHUB_APP_PRIVATE_KEY is neither a PEM key nor a readable file \(ENOENT\)$/,
  },
  {
    title: 'a log level',
    command: 'serve',
    env: { SVC_LOG_LEVEL: 'loud' },
    line: /^svc: configuration error: SVC_LOG_LEVEL must be one of .+, not "loud"$/,
  },
];

for (const mistake of mistakes)
  test(`svc ${mistake.command}: ${mistake.title} is one line and exit 2, before anything starts`, async (t) => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'svc-refused-')), 'data');
    const outcome = await runSvc([mistake.command], {
      SVC_DATA_DIR: dataDir,
      SVC_PORT: String(await freePort()),
      SVC_TEMPORAL_PORT: String(await freePort()),
      SVC_TEMPORAL_UI_PORT: String(await freePort()),
      ...mistake.env,
    });
    t.is(outcome.code, 2, outcome.stderr);
    const lines = outcome.stderr.split('\n').filter(Boolean);
    t.is(lines.length, 1, outcome.stderr);
    t.regex(lines[0]!, mistake.line);
    t.notRegex(outcome.stderr, /\n\s+at |Internal Error/);
    t.is(outcome.stdout, '', 'nothing started, so nothing said it had');
    t.false(existsSync(dataDir), 'no data directory, so no Temporal database, SQLite file or lock was made');
  });
