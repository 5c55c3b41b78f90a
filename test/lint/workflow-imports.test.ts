// The import rule on workflows/** must actually fire: lint small sources as if they lived there.
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

async function problems(source: string, filePath = 'workflows/example.workflow.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.map((message) => message.ruleId ?? message.message);
}

test('a workflow may import @temporalio/workflow, core modules and activity types', async (t) => {
  const source = [
    "import { sleep } from '@temporalio/workflow';",
    "import type { Activities } from '../activities/index.ts';",
    "import { classifyAgentExit } from '../core/agent-exit.ts';",
    'export const x: [typeof sleep, Activities | undefined, typeof classifyAgentExit] =',
    '  [sleep, undefined, classifyAgentExit];',
  ].join('\n');
  t.deepEqual(await problems(source), []);
});

for (const [name, line, rule] of [
  ['node builtins', "import { readFileSync } from 'node:fs';", '@typescript-eslint/no-restricted-imports'],
  ['the activity SDK', "import { Context } from '@temporalio/activity';", '@typescript-eslint/no-restricted-imports'],
  ['the ORM', "import { MikroORM } from '@mikro-orm/core';", '@typescript-eslint/no-restricted-imports'],
  ['activity values', "import { createActivities } from '../activities/index.ts';", 'svc/layers'],
]) {
  test(`a workflow may not import ${name}`, async (t) => {
    t.deepEqual(await problems(`${line}\nexport const used = [${line.match(/\{ (\w+) \}/)![1]}];`), [rule]);
  });
}

test('a workflow in a folder of workflows/ may not import activity values either', async (t) => {
  const source =
    "import { createActivities } from '../../activities/index.ts';\nexport const used = [createActivities];";
  t.deepEqual(await problems(source, 'workflows/run/example.ts'), ['svc/layers']);
  const types = "import type { Activities } from '../../activities/index.ts';\nexport type Used = Activities;";
  t.deepEqual(await problems(types, 'workflows/run/example.ts'), []);
});

test('the rule does not apply outside workflows/', async (t) => {
  t.deepEqual(
    await problems("import { readFileSync } from 'node:fs';\nexport const r = readFileSync;", 'activities/example.ts'),
    [],
  );
});
