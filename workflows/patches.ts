// Every patch id (workflow versioning with patched()) in one place. svc 1.0 is the baseline: no
// history of an earlier version has to replay, so no patch is asked. A change that alters the
// commands a workflow issues adds its id here, with the release that introduced it, and lives
// through three steps, each in a release note (CONTRIBUTING.md, "Changing a workflow"):
//   1. `patched(id)` while histories of the old code may be open;
//   2. `deprecatePatch(id)` in a later release, once none are (the old branch goes);
//   3. the call and the id go in the release after that.
// An id is never renamed or reused; a newer patch is asked where an older one was and stands for it.
export const PATCHES = {} as const satisfies Record<string, string>;
