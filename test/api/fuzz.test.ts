// Schemathesis (from PyPI) fuzzes a live stack from its own OpenAPI document with the checks the
// contract promises: no server errors, documented statuses, content types, headers and response
// schemas, bad input rejected, auth never ignored, missing headers and wrong methods answered
// properly. Any failure fails this test with schemathesis's report. GET /events/stream is held
// open by design, which a request/response fuzzer cannot consume; test/events covers it.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { startTestStack } from '../support/stack.ts';

const SCHEMATHESIS = process.env.SVC_SCHEMATHESIS ?? '.tools/schemathesis-venv/bin/schemathesis';
const CHECKS = [
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

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: schemathesis finds nothing wrong with the live API`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    if (!existsSync(SCHEMATHESIS)) {
      if (process.env.CI) return t.fail(`schemathesis is not installed at ${SCHEMATHESIS}`);
      t.log('schemathesis is not installed here (npm test installs it): not run');
      return t.pass();
    }
    // A judge for the proxy to reach, so its route answers 200 rather than 501 (not configured).
    const judge = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-verdicts-max-id': '0' }).end(''),
    );
    const judgeUrl = await listenOnLoopback(judge);
    const svc = await startTestStack({
      database: leg,
      env: { SVC_JUDGE_BASE_URL: judgeUrl, SVC_JUDGE_EXPORT_TOKEN: 'fuzz-judge-token' },
    });
    t.teardown(async () => {
      await svc.stop();
      await closeServer(judge);
    });
    const args = [
      'run',
      `${svc.url}/openapi.json`,
      '-H',
      `Authorization: Bearer ${svc.token}`,
      '--checks',
      CHECKS.join(','),
      '--phases',
      'examples,coverage,fuzzing',
      '--max-time',
      '45',
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
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    t.is(code, 0, output.slice(-6000));
    t.regex(output, /Tested: \d+/);
  });
}
