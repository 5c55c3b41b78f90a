// Syntax colours for the diff viewer, without a highlighter package: a line tokenizer for the
// common languages (comments, strings, numbers, keywords), chosen by file extension. One line at a
// time (a diff shows fragments), so a block comment opened on an earlier line is not known.

export type TokenKind = 'plain' | 'comment' | 'string' | 'number' | 'keyword';
export interface Token {
  kind: TokenKind;
  text: string;
}

interface Language {
  keywords: Set<string>;
  /** Line-comment openers. */
  comments: string[];
}

const words = (text: string) => new Set(text.split(' '));

const C_LIKE = 'if else for while do switch case break continue return default goto sizeof struct enum union typedef';
const JS =
  'const let var function return if else for while do switch case break continue new delete typeof instanceof in of ' +
  'class extends super this import export from default async await yield try catch finally throw null undefined true ' +
  'false interface type implements enum readonly public private protected static as void never unknown any';
const LANGUAGES: Record<string, Language> = {
  js: { keywords: words(JS), comments: ['//'] },
  py: {
    keywords: words(
      'def class return if elif else for while in not and or is None True False import from as with try except ' +
        'finally raise lambda yield pass break continue global nonlocal async await assert del',
    ),
    comments: ['#'],
  },
  go: {
    keywords: words(
      'func package import return if else for range switch case default break continue go defer chan map struct ' +
        'interface type var const nil true false select fallthrough',
    ),
    comments: ['//'],
  },
  rs: {
    keywords: words(
      'fn let mut pub use mod struct enum impl trait for in while loop if else match return self Self crate super ' +
        'as where move ref const static unsafe async await dyn true false None Some Ok Err',
    ),
    comments: ['//'],
  },
  c: {
    keywords: words(
      `${C_LIKE} int char long short unsigned signed float double void const static extern auto class public private ` +
        'protected new delete this namespace template typename virtual override true false null nullptr ' +
        'package import ' +
        'final extends implements interface throws throw try catch finally boolean',
    ),
    comments: ['//'],
  },
  sh: {
    keywords: words('if then else elif fi for while do done case esac in function return local export set unset'),
    comments: ['#'],
  },
  yaml: { keywords: words('true false null yes no on off'), comments: ['#'] },
  sql: {
    keywords: words(
      'select from where insert into values update set delete create table index drop alter add join left right ' +
        'inner outer on group by order having limit and or not null primary key references as distinct',
    ),
    comments: ['--'],
  },
};

const EXTENSIONS: Record<string, string> = {
  js: 'js',
  mjs: 'js',
  cjs: 'js',
  jsx: 'js',
  ts: 'js',
  tsx: 'js',
  mts: 'js',
  json: 'js',
  py: 'py',
  pyi: 'py',
  go: 'go',
  rs: 'rs',
  c: 'c',
  h: 'c',
  cc: 'c',
  cpp: 'c',
  hpp: 'c',
  java: 'c',
  kt: 'c',
  cs: 'c',
  swift: 'c',
  scala: 'c',
  css: 'c',
  scss: 'c',
  sh: 'sh',
  bash: 'sh',
  zsh: 'sh',
  toml: 'sh',
  dockerfile: 'sh',
  mk: 'sh',
  makefile: 'sh',
  rb: 'sh',
  pl: 'sh',
  yml: 'yaml',
  yaml: 'yaml',
  sql: 'sql',
};

/** The language of a path, by extension (or a name such as Dockerfile); undefined: plain text. */
export function languageOf(path: string): string | undefined {
  const name = path.split('/').pop()!.toLowerCase();
  const extension = name.includes('.') ? name.split('.').pop()! : name;
  return EXTENSIONS[extension];
}

const STRING = /"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|`(?:[^`\\]|\\.)*`?/;
const NUMBER = /\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b|\b0x[\da-f]+\b/;
const WORD = /[A-Za-z_$][\w$]*/;
const TOKEN = new RegExp(`(${STRING.source})|(${NUMBER.source})|(${WORD.source})`, 'gi');

/** One line's tokens; plain text when the language is unknown or the line is very long. */
export function tokenize(line: string, language: string | undefined): Token[] {
  const spec = language ? LANGUAGES[language] : undefined;
  if (!spec || line.length > 2000) return [{ kind: 'plain', text: line }];
  const tokens: Token[] = [];
  const push = (kind: TokenKind, text: string) => {
    if (!text) return;
    const last = tokens[tokens.length - 1];
    if (last && last.kind === kind) last.text += text;
    else tokens.push({ kind, text });
  };
  let cut = line.length;
  for (const opener of spec.comments) {
    // A comment opener outside a string: the first one whose preceding quotes are balanced.
    for (let at = line.indexOf(opener); at !== -1 && at < cut; at = line.indexOf(opener, at + 1)) {
      const before = line.slice(0, at);
      if ((before.match(/"/g)?.length ?? 0) % 2 === 0 && (before.match(/'/g)?.length ?? 0) % 2 === 0) {
        cut = at;
        break;
      }
    }
  }
  const code = line.slice(0, cut);
  let last = 0;
  for (const match of code.matchAll(TOKEN)) {
    push('plain', code.slice(last, match.index));
    const [text, string, number, word] = match;
    if (string) push('string', text);
    else if (number) push('number', text);
    else push(word && spec.keywords.has(language === 'sql' ? word.toLowerCase() : word) ? 'keyword' : 'plain', text);
    last = match.index! + text.length;
  }
  push('plain', code.slice(last));
  push('comment', line.slice(cut));
  return tokens;
}
