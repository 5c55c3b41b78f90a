// Schemathesis (from PyPI) fuzzing a live, populated svc from its own OpenAPI document, with the
// checks the contract promises: no server errors, documented statuses, content types, headers and
// response schemas, bad input rejected, auth never ignored, missing headers and wrong methods
// answered properly. GET /events/stream is held open by design, which a request/response fuzzer
// cannot consume; test/events covers it.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PopulatedIds } from './populated.ts';
import type { TestStack } from './stack.ts';

export const SCHEMATHESIS = process.env.SVC_SCHEMATHESIS ?? '.tools/schemathesis-venv/bin/schemathesis';
export const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
  'ignored_auth',
  'missing_required_header',
  'unsupported_method',
];

/**
 * Fixed path parameters per route family, so generated cases reach real things: the held running
 * run for reads and sandbox callbacks, a finished run for cancel, steer, events and diff (a fuzzed
 * cancel must not end the held run, and its event stream would be held open), a failed plan-run, the project (DELETE is
 * refused while its run is held).
 * Trigger ids stay generated: a real one would start a run per case.
 */
export function schemathesisConfig(ids: PopulatedIds): string {
  const operation = (pathRegex: string, parameters: Record<string, string>) =>
    [
      '[[operations]]',
      `include-path-regex = ${JSON.stringify(pathRegex)}`,
      `parameters = { ${Object.entries(parameters)
        .map(([key, value]) => `${JSON.stringify(key)} = ${JSON.stringify(value)}`)
        .join(', ')} }`,
      '',
    ].join('\n');
  return [
    operation('^/runs/\\{id\\}(/inbox|/finalize-intent|/finalize-result|/salvage|/git-credential)?$', {
      'path.id': ids.runs.running,
    }),
    // A finished run's events close at once; the held run's would be followed for ever.
    operation('^/runs/\\{id\\}/(cancel|steer|events|diff)$', { 'path.id': ids.runs.succeeded }),
    operation('^/plan-runs/\\{id\\}', { 'path.id': ids.planRuns.failed }),
    operation('^/projects/\\{id\\}(/[a-z-]+)*$', { 'path.id': ids.project }),
    operation('^/projects/\\{id\\}/seeds/\\{seedId\\}$', { 'path.id': ids.project, 'path.seedId': ids.seedId }),
    operation('^/projects/\\{id\\}/triggers/\\{triggerId\\}/run$', { 'path.id': ids.project }),
    operation('^/agents/\\{name\\}$', { 'path.name': 'shell' }),
  ].join('\n');
}

/** Runs schemathesis against the stack for `seconds`; its exit code and its report. */
export async function runSchemathesis(
  svc: Pick<TestStack, 'url' | 'token'>,
  ids: PopulatedIds,
  seconds: number,
): Promise<{ code: number | null; output: string }> {
  const configFile = join(mkdtempSync(join(tmpdir(), 'svc-fuzz-')), 'schemathesis.toml');
  writeFileSync(configFile, schemathesisConfig(ids));
  const args = [
    '--config-file',
    configFile,
    'run',
    `${svc.url}/openapi.json`,
    '-H',
    `Authorization: Bearer ${svc.token}`,
    '--checks',
    CHECKS.join(','),
    '--phases',
    'examples,coverage,fuzzing',
    '--max-time',
    String(seconds),
    '--exclude-path',
    '/events/stream',
    '--seed',
    '20261122',
    '--no-color',
  ];
  const child = spawn(SCHEMATHESIS, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  // 'close', not 'exit': the output is whole only once the pipes are drained.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, output };
}
