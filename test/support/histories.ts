// Where recorded workflow histories live: one directory per release (test/fixtures/histories/1.0/),
// each replayed by test/workflows/replay.test.ts for as long as histories of that release may
// still be open somewhere (CONTRIBUTING.md, "Changing a workflow").
import { join } from 'node:path';
import { SVC_VERSION } from '../../platform/version.ts';

export const HISTORIES = join('test', 'fixtures', 'histories');

/** This release's name (major.minor of the package version) and its histories' directory. */
export const RELEASE = SVC_VERSION.split('.').slice(0, 2).join('.');
export const RELEASE_HISTORIES = join(HISTORIES, RELEASE);
