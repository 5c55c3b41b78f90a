// The layer rule (svc/layers, scripts/layers.ts) must actually fire: lint small sources as if they
// lived in each layer, each import against the table of docs/architecture.md.
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

async function layerProblems(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.map((message) => `${message.ruleId}: ${message.message}`);
}

const refused: [string, string, RegExp][] = [
  ['core/x.ts', "import { a } from '../platform/config.ts';", /core\/ may not import platform\/config\.ts/],
  ['platform/x.ts', "const a = await import('../db/orm.ts');", /platform\/ may not import db\/orm\.ts/],
  ['db/x.ts', "export { a } from '../api/errors.ts';", /db\/ may not import api\/errors\.ts/],
  ['activities/x.ts', "import { a } from '../api/errors.ts';", /activities\/ may not import api\/errors\.ts/],
  ['activities/x.ts', "import type { a } from '../workflows/run.workflow.ts';", /may not import workflows/],
  ['api/services/x.ts', "import { a } from '../../activities/index.ts';", /only types from activities\/index\.ts/],
  ['api/x.ts', "import { type A, b } from '../workflows/run.workflow.ts';", /only types from workflows/],
  ['web/src/x.ts', "import { a } from '../../core/ids.ts';", /only types from core\/ids\.ts/],
  ['web/src/x.ts', "import type { a } from '../../db/orm.ts';", /web\/ may not import db\/orm\.ts/],
  ['newlayer/x.ts', "import { a } from '../core/ids.ts';", /newlayer\/ is in no layer/],
];
for (const [file, line, problem] of refused) {
  test(`svc/layers refuses ${line} in ${file}`, async (t) => {
    const found = await layerProblems(file, `${line}\nexport const used = 1;`);
    t.is(found.length, 1, found.join('\n'));
    t.regex(found[0]!, problem);
    t.true(found[0]!.startsWith('svc/layers: '));
  });
}

const allowed: [string, string][] = [
  ['platform/x.ts', "import { a } from '../core/ids.ts';"],
  ['db/x.ts', "import { a } from '../platform/file-lock.ts';"],
  ['activities/x.ts', "import { a } from '../workflows/messages.ts';"],
  ['api/services/x.ts', "import type { a } from '../../activities/index.ts';"],
  ['api/x.ts', "import { type A, type B } from '../workflows/run.workflow.ts';"],
  ['web/src/x.ts', "import { a } from '../../core/event-text.ts';"],
  ['web/src/x.ts', "import type { a } from '../../api/routes/runs.schema.ts';"],
  ['stack/x.ts', "import { a } from '../activities/index.ts';"],
  ['test/x.ts', "import { a } from '../activities/index.ts';"],
];
for (const [file, line] of allowed) {
  test(`svc/layers lets ${file} have ${line}`, async (t) => {
    t.deepEqual(await layerProblems(file, `${line}\nexport const used = 1;`), []);
  });
}
