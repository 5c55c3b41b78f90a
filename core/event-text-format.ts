// Small readers and formatters for the renderings of core/event-text.ts. Payloads come from the
// read model, parts of them from agents: every field is read defensively, every value clipped to one line.

export type Payload = Record<string, unknown>;

/** How much of one interpolated value a line keeps. */
const VALUE_MAX = 200;

/** The payload as an object (anything else: empty). */
export function asPayload(value: unknown): Payload {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Payload) : {};
}

/** One line of at most `max` characters: whitespace runs (newlines included) become one space. */
export function clip(value: string, max = VALUE_MAX): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A string field, clipped; null when absent, empty or not a string. */
export function str(payload: Payload, key: string): string | null {
  const value = payload[key];
  return typeof value === 'string' && value.trim() ? clip(value) : null;
}

/** A finite number field, else null. */
export function num(payload: Payload, key: string): number | null {
  const value = payload[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Any value as compact JSON on one line (clipped). */
export function compact(value: unknown, max = VALUE_MAX): string {
  if (typeof value === 'string') return clip(value, max);
  try {
    return clip(JSON.stringify(value) ?? String(value), max);
  } catch {
    return clip(String(value), max);
  }
}

/** `$1.23`; small amounts keep four decimals. */
export function usd(value: number): string {
  return `$${value < 0.01 && value > 0 ? value.toFixed(4) : value.toFixed(2)}`;
}

/** `1 commit`, `2 commits`. */
export function plural(count: number, noun: string, many = `${noun}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? noun : many}`;
}

/** `PR #12` from a pull request's URL, else the URL itself, else `the PR`. */
export function prName(url: unknown): string {
  if (typeof url !== 'string' || !url) return 'the PR';
  const number = /\/pull\/(\d+)(?:[/?#]|$)/.exec(url)?.[1];
  return number ? `PR #${number}` : clip(url);
}

/** ` (a, b)` from the parts that are present, or nothing. */
export function parens(...parts: (string | null | false | undefined)[]): string {
  const present = parts.filter((part): part is string => Boolean(part));
  return present.length ? ` (${present.join(', ')})` : '';
}

/** `: detail` when there is one. */
export function colon(detail: string | null | undefined): string {
  return detail ? `: ${detail}` : '';
}

/** Snake-case reasons read as words: `cost_cap_exceeded` → `cost cap exceeded`. */
export function words(value: string | null): string | null {
  return value === null ? null : value.replace(/_/g, ' ');
}

/** A tool call's input in brief: its command, path or query when it has one, else its JSON. */
export function toolInput(input: unknown): string | null {
  if (input === null || input === undefined) return null;
  const fields = asPayload(input);
  for (const key of ['command', 'cmd', 'file_path', 'filePath', 'path', 'pattern', 'url', 'query', 'description']) {
    const value = fields[key];
    if (typeof value === 'string' && value.trim()) return clip(value);
    if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return clip(value.join(' '));
  }
  return compact(input);
}

/** A tool result's text: a string, or the text of its content blocks (Claude Code's shape). */
export function toolResultText(content: unknown): { text: string; isError: boolean } {
  if (typeof content === 'string') return { text: clip(content), isError: false };
  if (Array.isArray(content)) {
    let isError = false;
    const texts: string[] = [];
    for (const block of content) {
      const fields = asPayload(block);
      if (fields.is_error === true) isError = true;
      const inner = fields.content ?? fields.text;
      if (typeof inner === 'string') texts.push(inner);
      else if (Array.isArray(inner)) texts.push(toolResultText(inner).text);
    }
    return { text: clip(texts.join(' ')), isError };
  }
  return { text: content === undefined || content === null ? '' : compact(content), isError: false };
}
