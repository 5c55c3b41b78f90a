// .svc/environment.yaml's schema: what a run takes from it, and a clear refusal of anything else
// (an unknown key, a key svc does not support yet, a bad duration, a path outside the repository).
import test from 'ava';
import { isDefaultCacheKeyFile, parseEnvironment } from '../../core/environment.ts';

test('a setup script with the defaults', (t) => {
  t.deepEqual(parseEnvironment('setup: npm ci\n'), {
    plan: { setup: 'npm ci', setupTimeoutMs: 600_000, cacheKey: null },
  });
  t.deepEqual(
    parseEnvironment(
      'setup: |\n  uv sync\n  uv run pytest --collect-only\nsetupTimeout: 1h30m\ncacheKey: [uv.lock, tools]\n',
    ),
    {
      plan: {
        setup: 'uv sync\nuv run pytest --collect-only\n',
        setupTimeoutMs: 5_400_000,
        cacheKey: ['uv.lock', 'tools'],
      },
    },
  );
});

test('every problem is named, with the file', (t) => {
  const refusal = (text: string) => {
    const read = parseEnvironment(text);
    return 'invalid' in read ? read.invalid : 'accepted';
  };
  t.is(refusal('setup: x\nsetuptimeout: 5m\nimage: node\n'), '.svc/environment.yaml: unknown keys setuptimeout, image');
  t.regex(refusal('setup: x\nservices: [postgres]\n'), /services: not supported yet/);
  t.regex(refusal('setup: x\nmcp: {github: {}}\n'), /mcp: /);
  t.regex(refusal('setup: x\nmcp: null\n'), /mcp: /, 'a key given empty is still given');
  t.regex(refusal('setupTimeout: 5m\n'), /setup: /);
  t.regex(refusal('setup: "   "\n'), /setup: a bash script, not blank/);
  t.regex(refusal('setup: x\nsetupTimeout: 5 minutes\n'), /setupTimeout: a duration such as 30s/);
  t.regex(refusal('setup: x\nsetupTimeout: 3h\n'), /setupTimeout: between 1s and 2h/);
  t.regex(refusal('setup: x\nsetupTimeout: 0s\n'), /setupTimeout: between 1s and 2h/);
  t.regex(refusal('setup: x\ncacheKey: [../secrets]\n'), /cacheKey\.0: a repo-relative path/);
  t.regex(refusal('setup: x\ncacheKey: []\n'), /cacheKey: /);
  t.regex(refusal('setup: [\n'), /^\.svc\/environment\.yaml: not YAML: /);
  t.regex(refusal('- setup: x\n'), /a mapping with a setup script is expected/);
  t.regex(refusal(''), /a mapping with a setup script is expected/);
});

test('the default cache-key files: known lockfiles and requirements files', (t) => {
  for (const path of ['package-lock.json', 'yarn.lock', 'requirements.txt', 'requirements-dev.txt', 'go.sum'])
    t.true(isDefaultCacheKeyFile(path), path);
  for (const path of ['package.json', 'README.md', 'requirements.in', 'lock.yaml'])
    t.false(isDefaultCacheKeyFile(path), path);
});
