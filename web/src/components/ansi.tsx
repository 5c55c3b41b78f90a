// Agent output as a terminal would colour it, and nothing more: SGR colours and bold, italic,
// underline become classes (the page's policy forbids inline styles); every other escape sequence
// (titles, OSC 8 links, cursor moves, clears) is dropped, and other control characters shown as
// their Unicode pictures. The text is always a text node: nothing an agent prints becomes markup.
import type { JSX } from 'preact';

interface Style {
  fg: string | null;
  bg: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

const PLAIN: Style = { fg: null, bg: null, bold: false, dim: false, italic: false, underline: false };

/** A CSI sequence (SGR when it ends in `m`), an OSC string (to BEL or ST), or another escape. */
const ESCAPE = /\u001b\[([0-?]*)[ -/]*([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]?/g;
/** C0 (but tab and newline), DEL and C1 controls. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const picture = (char: string) =>
  char === '\u007f' ? '\u2421' : char < ' ' ? String.fromCharCode(0x2400 + char.charCodeAt(0)) : '\ufffd';

/** The colour of a 256-colour index, when it is one of the 16 named ones. */
const named = (index: number | undefined) => (index !== undefined && index >= 0 && index < 16 ? String(index) : null);

function applySgr(style: Style, params: string): Style {
  const codes = params === '' ? [0] : params.split(/[;:]/).map((code) => (code === '' ? 0 : Number(code)));
  let next = { ...style };
  for (let index = 0; index < codes.length; index++) {
    const code = codes[index]!;
    if (code === 0) next = { ...PLAIN };
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = true;
    else if (code === 22) next = { ...next, bold: false, dim: false };
    else if (code === 23) next.italic = false;
    else if (code === 24) next.underline = false;
    else if (code >= 30 && code <= 37) next.fg = String(code - 30);
    else if (code >= 90 && code <= 97) next.fg = String(code - 90 + 8);
    else if (code === 39) next.fg = null;
    else if (code >= 40 && code <= 47) next.bg = String(code - 40);
    else if (code >= 100 && code <= 107) next.bg = String(code - 100 + 8);
    else if (code === 49) next.bg = null;
    else if (code === 38 || code === 48) {
      // 5;n (256 colours: the 16 named ones kept) or 2;r;g;b (true colour: not kept).
      const colour = codes[index + 1] === 5 ? named(codes[index + 2]) : null;
      if (code === 38) next.fg = colour;
      else next.bg = colour;
      index += codes[index + 1] === 5 ? 2 : codes[index + 1] === 2 ? 4 : 1;
    }
  }
  return next;
}

function classOf(style: Style): string {
  return [
    style.fg !== null && `ansi-fg-${style.fg}`,
    style.bg !== null && `ansi-bg-${style.bg}`,
    style.bold && 'ansi-bold',
    style.dim && 'ansi-dim',
    style.italic && 'ansi-italic',
    style.underline && 'ansi-underline',
  ]
    .filter(Boolean)
    .join(' ');
}

/** Runs of text with their classes (exported for its unit test's sake). */
export function ansiRuns(text: string): { text: string; className: string }[] {
  const runs: { text: string; className: string }[] = [];
  let style = PLAIN;
  let at = 0;
  const push = (part: string) => {
    const clean = part.replace(CONTROL, picture);
    if (!clean) return;
    const className = classOf(style);
    const last = runs[runs.length - 1];
    if (last && last.className === className) last.text += clean;
    else runs.push({ text: clean, className });
  };
  for (const match of text.matchAll(ESCAPE)) {
    push(text.slice(at, match.index));
    at = match.index + match[0].length;
    if (match[2] === 'm') style = applySgr(style, match[1] ?? '');
  }
  push(text.slice(at));
  return runs;
}

/** Agent output, coloured. */
export function AnsiText(props: { text: string }): JSX.Element {
  return (
    <>
      {ansiRuns(props.text).map((run, index) =>
        run.className ? (
          <span key={index} class={run.className}>
            {run.text}
          </span>
        ) : (
          run.text
        ),
      )}
    </>
  );
}
