// The workflows' code as one bundle (webpack, through the SDK). A worker builds it in a child
// process: webpack's heap (~150 MiB that V8 would keep in the worker for good) ends with the child.
//   node worker/workflow-bundle.ts <out.js>
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { logger } from '../platform/logger.ts';

export const WORKFLOWS_ENTRY = join(dirname(fileURLToPath(import.meta.url)), '..', 'workflows', 'index.ts');

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string, meta?: unknown) => logger({ component: 'workflow-bundler' }).warn({ meta }, message),
  error: (message: string, meta?: unknown) => logger({ component: 'workflow-bundler' }).error({ meta }, message),
};

const BUNDLE_TIMEOUT_MS = 5 * 60_000;

/** Builds the bundle in this process (the test harness and tools, which build it once). */
export async function buildWorkflowBundle(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_ENTRY, logger: quietBundlerLogger });
}

/** Builds the bundle in a child process, through a private directory under `scratchDir`. */
export async function buildWorkflowBundleApart(scratchDir: string): Promise<WorkflowBundle> {
  mkdirSync(scratchDir, { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(join(scratchDir, 'workflow-bundle-'));
  try {
    const out = join(dir, 'bundle.js');
    await promisify(execFile)(process.execPath, ['--no-warnings', fileURLToPath(import.meta.url), out], {
      maxBuffer: 16 * 1024 * 1024,
      // A bundler that hangs must not hold the worker's start for ever.
      timeout: BUNDLE_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    return { code: readFileSync(out, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run as a program (not imported): what `import.meta.main` says, on every Node 24.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write('usage: node worker/workflow-bundle.ts <out.js>\n');
    process.exit(2);
  }
  writeFileSync(out, (await buildWorkflowBundle()).code);
}
