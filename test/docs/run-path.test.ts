// docs/architecture.md's "A run, end to end" names the files a reader opens to follow one run from
// `POST /runs` to its pull request: few enough to read, and each one there.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';

/** The files of the table that opens the section: its rows' second cells. */
function runPathFiles(markdown: string): string[] {
  const section = markdown.split('## A run, end to end')[1]?.split('\n## ')[0] ?? '';
  return [...section.matchAll(/^\| *\d+ *\| *`([^`]+)` *\|/gm)].map((match) => match[1]!);
}

test('the run path names at most 15 files, each of which exists', (t) => {
  const files = runPathFiles(readFileSync('docs/architecture.md', 'utf8'));
  t.true(files.length >= 10, `the table is found: ${files.length} files`);
  t.true(files.length <= 15, `${files.length} files`);
  t.deepEqual(
    files.filter((file) => !existsSync(file)),
    [],
    'every file named is in the repository',
  );
  t.is(new Set(files).size, files.length, 'no file twice');
});

test('the check itself: it reads the numbered rows of that section only', (t) => {
  const doc =
    '## Other\n| 1 | `nope.ts` | x |\n## A run, end to end\n| 1 | `a.ts` | x |\n| 2 | `b.ts` | y |\n## Next\n';
  t.deepEqual(runPathFiles(doc), ['a.ts', 'b.ts']);
});
