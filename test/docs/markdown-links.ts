// Relative links and images of a Markdown file, and the anchors its headings make, as GitHub
// renders them: fenced code blocks and inline code are not Markdown, so links there are not links.

export interface MarkdownLink {
  line: number;
  target: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
const INLINE_LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g;
const REFERENCE_DEFINITION = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/;
const HTML_ATTRIBUTE = /<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*"([^"]*)"/gi;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;

/** The lines of `text` outside fenced code blocks, each with its 1-based number. */
function proseLines(text: string): { line: number; text: string; raw: string }[] {
  const lines: { line: number; text: string; raw: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((content, index) => {
    const marker = FENCE.exec(content)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && !content.trim().slice(marker.length))
        fence = undefined;
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    lines.push({ line: index + 1, text: content.replace(/(`+)[^`]*?\1/g, ''), raw: content });
  });
  return lines;
}

/** Every link or image target in `text` that is not absolute (no scheme, not protocol-relative). */
export function relativeLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text: content } of proseLines(text)) {
    const targets = [
      ...[...content.matchAll(INLINE_LINK)].map((match) => match[1]!),
      ...[...content.matchAll(HTML_ATTRIBUTE)].map((match) => match[1]!),
    ];
    const definition = REFERENCE_DEFINITION.exec(content)?.[1];
    if (definition) targets.push(definition);
    for (const raw of targets) {
      const target = raw.replace(/^<|>$/g, '');
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      links.push({ line, target });
    }
  }
  return links;
}

/** Link text instead of links, and no HTML tags: what a heading shows outside its code spans. */
const shownText = (part: string) => part.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/<[^>]+>/g, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens (code spans kept as text). */
export function headingSlug(heading: string): string {
  return heading
    .split(/(`+[^`]*`+)/)
    .map((part) => (part.startsWith('`') ? part : shownText(part)))
    .join('')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of every heading in `text`; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { raw } of proseLines(text)) {
    const heading = HEADING.exec(raw)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}
