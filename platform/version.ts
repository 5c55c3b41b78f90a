// The service version, from package.json. Kept apart so that light commands need not load the stack.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SVC_VERSION: string = (
  JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
