// How `svc serve` and `svc worker` start the stack: a configuration mistake is one line on stderr
// and exit 2, a data directory another `svc serve` holds one line and exit 6; either way nothing
// has started (stack/preflight.ts, stack/instance-lock.ts).
import type { Writable } from 'node:stream';
import { ConfigurationError } from '../platform/config-error.ts';
import { PortInUseError } from '../platform/port-in-use.ts';
import type { RunningStack, StackOptions } from '../stack/stack.ts';
import { DataDirInUseError } from '../stack/instance-lock.ts';
import { EXIT } from './base-command.ts';

/** The running stack, or the exit code of a refusal already explained on `stderr`. */
export async function startService(stderr: Writable, options: () => StackOptions): Promise<RunningStack | number> {
  try {
    // Loaded on demand: the stack pulls in Temporal, the ORM and the API, which other commands do not need.
    const { startStack } = await import('../stack/stack.ts');
    return await startStack(options());
  } catch (error) {
    if (error instanceof ConfigurationError) {
      stderr.write(`svc: configuration error: ${error.message}\n`);
      return EXIT.usage;
    }
    if (error instanceof DataDirInUseError || error instanceof PortInUseError) {
      stderr.write(`svc: ${error.message}\n`);
      return EXIT.inUse;
    }
    throw error;
  }
}
