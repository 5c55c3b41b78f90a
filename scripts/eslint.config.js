// Lint rules that guard the architecture: every import follows the layers of docs/architecture.md
// (svc/layers, from scripts/layers.ts), git on the host starts only in platform/host-git.ts
// (svc/host-git, scripts/host-git-rule.ts), and workflow code stays deterministic: files under
// workflows/ import no library but @temporalio/workflow.
import tseslint from 'typescript-eslint';
import { hostGitPlugin } from './host-git-rule.ts';
import { layersPlugin } from './layers.ts';

const NON_DETERMINISTIC = [
  {
    group: [
      'node:*',
      'fs',
      'fs/*',
      'path',
      'child_process',
      'crypto',
      'http',
      'https',
      'net',
      'os',
      'timers',
      'timers/*',
    ],
    message: 'workflow code must be deterministic: do I/O in an activity',
  },
  {
    group: ['@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/testing'],
    message: 'workflows import only @temporalio/workflow',
  },
  {
    group: ['@mikro-orm/*', 'koa', '@koa/*', 'clipanion', 'pg', 'better-sqlite3', 'yaml', '@octokit/*'],
    message: 'workflows never touch I/O libraries; call an activity',
  },
];

// platform/node-http.ts says why: an ESM import of node:http loads Node's fetch client.
const NODE_HTTP = ['node:http', 'node:https', 'http', 'https', '@koa/router'].map((name) => ({
  name,
  allowTypeImports: true,
  message: 'take it from platform/node-http.ts (an ESM import of node:http loads undici)',
}));

const SANDBOX_FACADE = [
  {
    group: ['**/sandbox/*', '!**/sandbox/index.ts', '!**/sandbox/spec.ts'],
    message: 'call the sandbox runtime through sandbox/index.ts (shapes: sandbox/spec.ts)',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.svc-data/**', '**/dist/**', 'db/migrations/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { ecmaVersion: 'latest', sourceType: 'module', ecmaFeatures: { jsx: true } },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'TSEnumDeclaration',
          message: 'use a const array and a union type (type stripping cannot run enums)',
        },
      ],
    },
  },
  {
    // Lines of at most 120 characters: prettier's width, which it cannot hold for a long string, comment
    // or regular expression. A module path alone on an import line cannot be wrapped.
    files: ['**/*.ts', '**/*.tsx'],
    rules: { 'max-len': ['error', { code: 120, ignorePattern: "^import .* from '[^']+';$" }] },
  },
  {
    // Production code imports along the layers; tests may import anything.
    files: ['**/*.ts', '**/*.tsx'],
    ignores: ['test/**'],
    plugins: { svc: { rules: { ...layersPlugin.rules, ...hostGitPlugin.rules } } },
    rules: { 'svc/layers': 'error', 'svc/host-git': 'error' },
  },
  {
    // Type-aware: a promise nobody awaits or handles loses its failure (an unhandled rejection,
    // or an activity whose error never reaches the workflow). `void` marks a deliberate one.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname + '/..' } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['sandbox/**/*.ts', 'db/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: NODE_HTTP }] },
  },
  {
    // The sandbox runtime's callers go through its facade (sandbox/index.ts) and its shapes (spec.ts).
    files: ['activities/**/*.ts', 'worker/**/*.ts', 'cli/**/*.ts', 'stack/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: NODE_HTTP, patterns: SANDBOX_FACADE }],
    },
  },
  {
    // The API never reaches a sandbox or a backend, not even for types: that is the workers' business,
    // asked of them through a workflow (the cluster's pod count for admission: docs/decisions/0039).
    files: ['api/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: NODE_HTTP,
          patterns: [
            { group: ['**/sandbox/*'], message: 'the API never imports sandbox/: ask a worker (an activity)' },
          ],
        },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: NON_DETERMINISTIC }],
    },
  },
  {
    // The dashboard's bundle holds only its own code: the server's schemas lend it their types.
    files: ['web/**/*.ts', 'web/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'zod', allowTypeImports: true, message: 'the dashboard takes only types from zod' }] },
      ],
    },
  },
);
