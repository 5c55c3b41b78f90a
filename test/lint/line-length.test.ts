// Lines of svc's code stay within 120 characters (max-len in scripts/eslint.config.js): lint small
// sources as if they lived in the repository.
import test from 'ava';
import { ESLint } from 'eslint';

const eslint = new ESLint({
  overrideConfigFile: 'scripts/eslint.config.js',
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
});

async function ruleIds(source: string, filePath: string): Promise<(string | null)[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.map((message) => message.ruleId);
}

test('a line of 121 characters is refused, one of 120 is not, in code and in tests', async (t) => {
  const line = (length: number) => `export const text = '${'x'.repeat(length - 23)}';`;
  t.is(line(121).length, 121);
  for (const file of ['core/example.ts', 'test/example.test.ts', 'web/src/example.tsx']) {
    t.deepEqual(await ruleIds(line(121), file), ['max-len'], file);
    t.deepEqual(await ruleIds(line(120), file), [], file);
  }
  const comment = `// ${'word '.repeat(24)}`;
  t.true(comment.length > 120);
  t.deepEqual(await ruleIds(comment, 'api/example.ts'), ['max-len']);
});

test('an import whose module path alone makes the line long is let through', async (t) => {
  const path = `kubernetes-models/${'admissionregistration.k8s.io/'.repeat(4)}v1/Binding`;
  const source = `import { Binding } from '${path}';\nexport const b = Binding;`;
  t.true(source.split('\n')[0]!.length > 120);
  t.deepEqual(await ruleIds(source, 'test/example.ts'), []);
});
