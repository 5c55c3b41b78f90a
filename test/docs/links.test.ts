// Every relative link and image in README.md, CONTRIBUTING.md and docs/**/*.md resolves to a file of
// the repository, and every `#anchor` to a heading of the file it names: the docs must stand alone.
import test from 'ava';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { headingAnchors, relativeLinks } from './markdown-links.ts';

const ROOT = resolve('.');

function markdownFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const anchorsByFile = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorsByFile.get(file);
  if (!anchors) anchorsByFile.set(file, (anchors = headingAnchors(readFileSync(file, 'utf8'))));
  return anchors;
}

/** Why `target`, linked from `file`, does not resolve; undefined when it does. */
function brokenBecause(file: string, target: string): string | undefined {
  const [pathPart = '', anchor] = target.split('#', 2);
  const path = decodeURIComponent(pathPart.split('?')[0]!);
  const destination = path ? resolve(dirname(file), path) : file;
  if (destination !== ROOT && !destination.startsWith(ROOT + sep)) return 'outside the repository';
  if (!existsSync(destination)) return 'no such file';
  if (!anchor || !destination.endsWith('.md') || statSync(destination).isDirectory()) return undefined;
  return anchorsOf(destination).has(anchor.toLowerCase()) ? undefined : `no heading #${anchor}`;
}

function brokenLinks(files: string[]): string[] {
  return files.flatMap((file) =>
    relativeLinks(readFileSync(file, 'utf8')).flatMap(({ line, target }) => {
      const reason = brokenBecause(file, target);
      return reason ? [`${relative(ROOT, file)}:${line} ${target} (${reason})`] : [];
    }),
  );
}

test('every relative link and image in README.md, CONTRIBUTING.md and docs/ resolves inside the repository', (t) => {
  const files = [resolve('README.md'), resolve('CONTRIBUTING.md'), ...markdownFiles(resolve('docs'))];
  t.true(files.length > 10, `only ${files.length} Markdown files found`);
  const links = files.flatMap((file) => relativeLinks(readFileSync(file, 'utf8')));
  t.true(links.length > 100, `only ${links.length} relative links found: the scan finds none`);
  t.deepEqual(brokenLinks(files), [], 'broken links');
});

test('the check itself: links, images and anchors that do not resolve are reported', (t) => {
  const readme = resolve('README.md');
  const sample = [
    '[spec](../outside/x.md) [gone](docs/nowhere.md) ![img](docs/images/none.png)',
    '<img src="docs/images/missing.png"> [web](https://example.com) `[code](not/a/link.md)`',
    '[anchor](docs/runs.md#no-such-heading) [fine](docs/runs.md#cancel) [here](#the-dashboard)',
    '```',
    '[fenced](fenced/away.md)',
    '```',
  ].join('\n');
  const reasons = relativeLinks(sample).map(({ target }) => `${target} ${brokenBecause(readme, target) ?? 'ok'}`);
  t.deepEqual(reasons, [
    '../outside/x.md outside the repository',
    'docs/nowhere.md no such file',
    'docs/images/none.png no such file',
    'docs/images/missing.png no such file',
    'docs/runs.md#no-such-heading no heading #no-such-heading',
    'docs/runs.md#cancel ok',
    '#the-dashboard ok',
  ]);
});
