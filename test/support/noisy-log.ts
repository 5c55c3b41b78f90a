// A shell run whose log is longer than one page of events and holds what a hostile or colourful
// agent prints: SGR colours, markup, a window title, an OSC 8 link, cursor moves, a bell.
/** How many numbered lines the script prints (more than one page of the events API, 500). */
export const NUMBERED_LINES = 1200;

/** The lines the script prints before its numbered ones, as the agent wrote them. */
export const NOISY_LINES = {
  colours: '\u001b[1;31mbold red\u001b[0m then \u001b[32mgreen\u001b[0m plain',
  markup: '<img src=x onerror="document.title=\'pwned\'"><b>not bold</b>',
  title: '\u001b]0;owned title\u0007after title',
  link: '\u001b]8;;https://evil.example/\u001b\\click me\u001b]8;;\u001b\\ done',
  cursor: '\u001b[2J\u001b[H\u001b[5Acursor moved\u001b[K',
};

/** printf's own escapes for one line (the shell prints the bytes). */
const printf = (line: string) =>
  `printf '%b\\n' '${line
    .replace(/\\/g, '\\\\')
    .replace(/\u001b/g, '\\033')
    .replace(/\u0007/g, '\\007')
    .replace(/'/g, "'\\''")}'`;

/** The shell agent's prompt: the noisy lines, then `line 1` … `line N`, then an echo on stderr. */
export const NOISY_SCRIPT = [
  ...Object.values(NOISY_LINES).map(printf),
  `i=1; while [ $i -le ${NUMBERED_LINES} ]; do echo "line $i"; i=$((i+1)); done`,
  'echo "the end" >&2',
].join('\n');
