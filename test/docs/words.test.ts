// The repository speaks of the product, not of how it was built: no tracked text file numbers the
// working sessions it was written in, credits a review of the code with a finding, cites a development
// ticket or points at a notes folder the repository does not have. The patterns are narrow on purpose:
// a sign-in or tmux session, a PR reviewer, a GitHub or Sentry issue (svc's seeds and alerts are product
// data) and the spawner or credential "helper" (code names) pass.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

interface Finding {
  file: string;
  line: number;
  text: string;
  why: string;
}

/** What a development ticket was named after: an area of the product. */
const TICKET_AREAS = 'runs|operations|dashboard|previews|security|performance|plan-runs?|webhooks|api|cli';

/** Development-journal phrases; `\s+` between words, so this file's own sources never match them. */
const JOURNAL: { pattern: RegExp; why: string }[] = [
  { pattern: /\bsessions?\s+\d+/i, why: 'a working session by number' },
  { pattern: /\b(?:this|the\s+previous|the\s+next)\s+session\b/i, why: 'a working session' },
  { pattern: /\bworking\s+period\b/i, why: 'a stretch of development work' },
  { pattern: /\bhostile\s+review\b/i, why: 'a review of the code, not the product' },
  { pattern: /\breview(?:er)?s?\s+(?:found|showed|drove)\b/i, why: 'a review of the code, not the product' },
  { pattern: /\breview\s+helper\b|\bhelper's\s+(?:hostile\s+)?review\b/i, why: 'how the code was reviewed' },
  { pattern: /\bred[-\s]team\b/i, why: 'how the code was attacked' },
  { pattern: /(?<![\w./-])notes\//, why: 'a notes folder outside the repository' },
  { pattern: /\b(?:in|as|per)\s+the\s+notes\b|\bthe\s+notes'/i, why: 'notes outside the repository' },
  { pattern: new RegExp(String.raw`\bthe\s+(?:${TICKET_AREAS})\s+issue\b`, 'i'), why: 'a development ticket' },
  { pattern: /\b(?<!(?:GitHub|Sentry)\s)issues?\s+#?\d+\b/i, why: 'a development ticket by number' },
  { pattern: /\bthe\s+issue\s+(?:says|said|set|sets|asks|asked|wants)\b/i, why: 'a development ticket' },
];

/** Files whose text is not the repository's own words: the lockfile, and recorded fixtures. */
const SKIPPED = [/^package-lock\.json$/, /^test\/fixtures\//];

function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\0')
    .filter((file) => file && !SKIPPED.some((skip) => skip.test(file)));
  return files.filter((file) => {
    try {
      return !readFileSync(file).subarray(0, 8000).includes(0);
    } catch {
      return false; // deleted in the work tree but still in the index
    }
  });
}

function journalWords(file: string, text: string): Finding[] {
  return text.split('\n').flatMap((line, index) => {
    const found = JOURNAL.find(({ pattern }) => pattern.test(line));
    return found ? [{ file, line: index + 1, text: line.trim(), why: found.why }] : [];
  });
}

test('no tracked text file speaks of how svc was developed', (t) => {
  const files = trackedTextFiles();
  t.true(files.length > 300, `only ${files.length} tracked text files found`);
  t.true(files.includes('README.md') && files.includes('docs/security.md'), 'the docs are not in the scan');
  const findings = files.flatMap((file) => journalWords(file, readFileSync(file, 'utf8')));
  t.deepEqual(
    findings.map(({ file, line, text, why }) => `${file}:${line} ${text} (${why})`),
    [],
    'say what the product does and why, not when or by whom it was found',
  );
});

test('the check itself: journal phrases are refused, product words pass', (t) => {
  // Built from parts, so that this file's own lines pass the scan above.
  const [s, r, n, i] = ['session', 'review', 'notes', 'issue'];
  const refused = [
    `measured in ${s} 12`,
    `since ${s}s 39 and 40`,
    `Figures of this ${s}, ahead of the next`,
    `a hostile ${r} found each of these`,
    `A second ${r} showed 300 pipelined requests`,
    `found by a ${r} helper`,
    `found by a helper's hostile ${r}`,
    `as the ${n} say ("exit 1 on any failure")`,
    `details in ${n}/dispatch.md`,
    `an absolute bound from the dashboard ${i}`,
    `fixed in ${i} 42`,
    `The ${i} says it of comments`,
  ];
  const passed = [
    'the sign-in session lasts a day',
    "tmux's new-session -d -s svc",
    'Agent session started (claude-x, 14 tools)',
    'a reviewer asks for changes; a review round starts',
    'seeds come from GitHub issue #12 and Sentry issue 4521',
    'the seeds tracker: .seeds/issues.jsonl',
    'the spawner helper starts supervisors; credential.helper is cleared',
    'salvage notes: ["push refused"]',
    'git mv docs/old-name.md docs/notes.md',
  ];
  t.deepEqual(
    refused.filter((line) => journalWords('sample', line).length === 0),
    [],
    'phrases that should be refused',
  );
  t.deepEqual(
    passed.filter((line) => journalWords('sample', line).length > 0),
    [],
    'product words that should pass',
  );
});
