// svc runs git on its host only through platform/host-git.ts, which reads no configuration but svc's
// own (decision 0043): the lint rule svc/host-git refuses any other file of svc's that starts git
// itself. svc's programs inside a sandbox (sandbox/inside/) run the agent's git with the agent's
// rights, as they must, and tests are free.
import { relative } from 'node:path';
import type { Rule } from 'eslint';
import { ROOT } from './layers.ts';

/** Where git may be started directly. */
const ALLOWED = [/^platform\/host-git\.ts$/, /^sandbox\/inside\//, /^test\//];

/** A program name that is git: `git`, or a path to it. */
const GIT_PROGRAM = /^(?:\S*\/)?git$/;
/** A shell, whose command line may start git. */
const SHELL_PROGRAM = /^(?:\S*\/)?(?:sh|bash|dash|zsh)$/;
/** Functions whose first argument is a shell command line. */
const SHELL_CALLS = new Set(['exec', 'execSync']);
/** A shell command line that starts git: at its start, after a separator, or after exec. */
const SHELL_STARTS_GIT = /(?:^|[;&|(`]|\bexec)\s*(?:\S*\/)?git(?:\s|$)/;

// The parts of ESTree nodes the rule reads.
interface Node {
  type: string;
  name?: string;
  value?: unknown;
  property?: Node;
  callee?: Node;
  elements?: (Node | null)[];
  quasis?: { value: { cooked: string | null } }[];
  expressions?: Node[];
  arguments?: Node[];
}

/** The text of a string literal, or of a template literal without substitutions. */
function text(node: Node | null | undefined): string | undefined {
  if (node?.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node?.type === 'TemplateLiteral' && node.expressions?.length === 0) return node.quasis?.[0]?.value.cooked ?? '';
  return undefined;
}

/** The strings a call hands over: its string arguments, and the strings of its array arguments. */
function strings(args: Node[]): string[] {
  return args.flatMap((argument) =>
    argument.type === 'ArrayExpression'
      ? (argument.elements ?? []).flatMap((element) => text(element) ?? [])
      : (text(argument) ?? []),
  );
}

/** Whether a call starts git: as its program, as argv's first word, or on a shell's command line. */
function startsGit(call: Node): boolean {
  const args = call.arguments ?? [];
  const program = text(args[0]);
  if (program !== undefined && GIT_PROGRAM.test(program)) return true;
  if (
    args.some((argument) => argument.type === 'ArrayExpression' && GIT_PROGRAM.test(text(argument.elements?.[0]) ?? ''))
  )
    return true;
  const callee = call.callee?.type === 'MemberExpression' ? call.callee.property : call.callee;
  const firstOfArgv = args[0]?.type === 'ArrayExpression' ? text(args[0].elements?.[0]) : undefined;
  const shell =
    SHELL_CALLS.has(callee?.name ?? '') || SHELL_PROGRAM.test(program ?? '') || SHELL_PROGRAM.test(firstOfArgv ?? '');
  return shell && strings(args).some((value) => SHELL_STARTS_GIT.test(value));
}

const hostGitRule: Rule.RuleModule = {
  meta: {
    type: 'problem',
    schema: [],
    docs: { description: 'git on the host runs only through platform/host-git.ts' },
  },
  create(context) {
    const file = relative(ROOT, context.filename);
    if (ALLOWED.some((pattern) => pattern.test(file))) return {};
    const check = (node: Rule.Node) => {
      if (startsGit(node as unknown as Node))
        context.report({
          node,
          message: "start git through platform/host-git.ts: svc's git obeys no config but svc's (decision 0043)",
        });
    };
    return { CallExpression: check, NewExpression: check };
  },
};

export const hostGitPlugin = { rules: { 'host-git': hostGitRule } };
