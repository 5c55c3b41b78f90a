// The rule svc/host-git (scripts/host-git-rule.ts) must actually fire: lint small sources as if they
// lived in svc's layers. Only platform/host-git.ts, and svc's programs inside a sandbox, start git.
import test from 'ava';
import { ESLint } from 'eslint';

// The sources below are not files of the TypeScript project, so the type-aware rules are off here.
const eslint = new ESLint({
  overrideConfigFile: 'scripts/eslint.config.js',
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
});

async function rules(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.map((message) => message.ruleId ?? message.message);
}

const IMPORTS = "import { execFile, execSync, spawn, spawnSync } from 'node:child_process';\n";

const refused: [string, string][] = [
  ['execFile of git', "execFile('git', ['status'], () => {});"],
  ['spawnSync of a path to git', "spawnSync('/usr/bin/git', ['fetch']);"],
  ['a template literal', 'spawn(`git`, []);'],
  ['git as the first word of an argv', "const run = (argv: string[]) => argv; run(['git', 'push']);"],
  ['git on a shell line', "execSync('cd /tmp && git clone x y');"],
  ['git exec-ed by sh -c', "spawn('/bin/sh', ['-c', 'ulimit -v 1 && exec git \"$@\"', 'git', 'log']);"],
];
for (const [what, line] of refused) {
  for (const file of ['activities/x.ts', 'platform/x.ts', 'cli/doctor/x.ts', 'sandbox/host/x.ts']) {
    test(`svc/host-git refuses ${what} in ${file}`, async (t) => {
      t.deepEqual(await rules(file, `${IMPORTS}${line}\nexport const used = [execFile, execSync, spawn, spawnSync];`), [
        'svc/host-git',
      ]);
    });
  }
}

const allowed: [string, string, string][] = [
  ['platform/host-git.ts', 'the one module that runs git', "execFile('git', ['status'], () => {});"],
  ['sandbox/inside/x.ts', "a program inside the sandbox (the agent's own git)", "execFile('git', ['status']);"],
  ['activities/x.ts', 'another program', "execFile('chown', ['-R', '1:1', '/tmp/x'], () => {});"],
  ['activities/x.ts', 'a shell line that only speaks of git', "spawn('sh', ['-c', 'echo the git clone failed']);"],
  ['activities/x.ts', "a message that starts with git's name", "console.log('git clone failed');"],
];
for (const [file, what, line] of allowed) {
  test(`svc/host-git lets through ${what}`, async (t) => {
    t.deepEqual(
      await rules(file, `${IMPORTS}${line}\nexport const used = [execFile, execSync, spawn, spawnSync];`),
      [],
    );
  });
}
