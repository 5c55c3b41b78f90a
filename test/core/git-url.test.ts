import test from 'ava';
import { parseGitHubUrl } from '../../core/git-url.ts';

const accepted: [string, string][] = [
  ['https://github.com/acme/widget', 'https://github.com/acme/widget'],
  ['https://github.com/acme/widget.git', 'https://github.com/acme/widget'],
  ['https://github.com/acme/widget/', 'https://github.com/acme/widget'],
  ['http://github.com/acme/widget', 'https://github.com/acme/widget'],
  ['https://GitHub.com/Acme/my.repo_x-1', 'https://github.com/acme/my.repo_x-1'],
  ['https://GITHUB.com/ACME/Demo', 'https://github.com/acme/demo'],
  ['github.com/acme/widget', 'https://github.com/acme/widget'],
  ['git@github.com:acme/widget.git', 'https://github.com/acme/widget'],
  ['git@github.com:acme/widget', 'https://github.com/acme/widget'],
  ['ssh://git@github.com/acme/widget.git', 'https://github.com/acme/widget'],
  ['  https://github.com/acme/widget  ', 'https://github.com/acme/widget'],
];

for (const [input, canonical] of accepted) {
  test(`accepts ${JSON.stringify(input)}`, (t) => {
    const result = parseGitHubUrl(input);
    t.true(result.ok);
    if (result.ok) {
      t.is(result.repo.canonicalUrl, canonical);
      t.is(result.repo.cloneUrl, `${canonical}.git`);
    }
  });
}

const rejected: [string, RegExp][] = [
  ['', /empty/],
  ['https://user:secret@github.com/acme/widget', /credentials/],
  ['https://token@github.com/acme/widget', /credentials/],
  ['https://gitlab.com/acme/widget', /only github.com/],
  ['git@bitbucket.org:acme/widget.git', /only github.com/],
  ['https://github.com/acme', /owner>\/<repo/],
  ['https://github.com/acme/widget/tree/main', /owner>\/<repo/],
  ['https://github.com/acme/../widget', /owner>\/<repo|not a valid/],
  ['https://github.com/-acme/widget', /not a valid GitHub owner/],
  ['https://github.com/acme/wid get', /not a valid GitHub owner/],
  ['https://github.com/acme/..', /not a valid GitHub owner|owner>\/<repo/],
  ['ftp://github.com/acme/widget', /scheme/],
  ['ssh://root@github.com/acme/widget', /ssh user/],
  ['https://github.com:8443/acme/widget', /port/],
  ['https://github.com/acme/widget?x=1', /query/],
  ['widget', /not a GitHub repository URL/],
];

for (const [input, message] of rejected) {
  test(`rejects ${JSON.stringify(input)}`, (t) => {
    const result = parseGitHubUrl(input);
    t.false(result.ok);
    if (!result.ok) {
      t.regex(result.message, message);
      t.true(result.hint.length > 0);
    }
  });
}
