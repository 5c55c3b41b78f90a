// Lint rules that guard the architecture. The main one: workflow code must stay deterministic, so
// files under workflows/ import only @temporalio/workflow, pure modules of core/, each other, and
// types (`import type`) from anywhere.
import tseslint from 'typescript-eslint';

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
  {
    // From workflows/ and from its folders (workflows/run/).
    group: ['activities', 'sandbox', 'api', 'db', 'platform', 'stack', 'worker', 'cli'].flatMap((layer) => [
      `../${layer}/*`,
      `../../${layer}/*`,
    ]),
    allowTypeImports: true,
    message: 'only types may come from these layers (import type)',
  },
];

// core/ is pure and shared by every layer; platform/ holds leaf helpers with I/O (settings, locks,
// processes, config files). Neither may reach up into a layer that uses it.
const LEAF_LAYERS = [
  {
    group: [
      '../activities/*',
      '../sandbox/*',
      '../api/*',
      '../workflows/*',
      '../stack/*',
      '../worker/*',
      '../cli/*',
      '../db/*',
    ],
    message: 'core/ and platform/ are leaves: the layers import them, never the reverse',
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
    files: ['platform/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: LEAF_LAYERS }] },
  },
  {
    // core/ does no I/O at all, so not even platform/ is below it.
    files: ['core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ ...LEAF_LAYERS[0], group: [...LEAF_LAYERS[0].group, '../platform/*'] }] },
      ],
    },
  },
  {
    // The dashboard's bundle holds only its own code: the server's schemas lend it their types.
    files: ['web/**/*.ts', 'web/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // Pure modules without imports the dashboard shares with the CLI: project names, event renderings.
              group: [
                '**/api/routes/*',
                '**/core/*',
                '!**/core/project-name.ts',
                '!**/core/event-text.ts',
                '!**/core/event-text-format.ts',
                '**/db/*',
                '**/platform/*',
                '**/activities/*',
                'zod',
              ],
              allowTypeImports: true,
              message: 'the dashboard takes only types from the server (import type), and core/event-text.ts',
            },
          ],
        },
      ],
    },
  },
);
