// Text from outside svc quoted into an agent's prompt (an alert, a review, CI output) or posted by
// svc (a round's report): made inert as quoted data. Invisible and bidirectional characters go
// (they hide what a reader sees), and a run of three or more backticks or tildes, which would open
// or close a Markdown fence, is spaced out into plain characters.

const INVISIBLE = /[\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
const FENCE = /([`~])\1{2,}/g;

/** The text without invisible characters, its fence runs spaced out (``` → ` ` `). */
export function inertText(text: string): string {
  return text.replace(INVISIBLE, '').replace(FENCE, (run) => run.split('').join(' '));
}
