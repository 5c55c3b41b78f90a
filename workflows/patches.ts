// Every patch id (workflow versioning with patched()) in one place: a history recorded before a
// change replays down the old branch, a new execution takes the new one. Never rename or reuse.
export const PATCHES = {
  /** The run's watchdog timers (silence, maximum duration). */
  silenceWatchdog: 'silence-watchdog',
  /** svc pushes the branch the sandbox handed over; older runs pushed from inside the sandbox. */
  svcPushesHandedOverBranch: 'svc-pushes-handed-over-branch',
  /** A plan child that succeeds with nothing to push is merged at once (a trivial merge). */
  emptyChildMerges: 'empty-child-trivial-merge',
  /** A successful run with an open PR starts its project's preview. */
  previews: 'previews',
  /** A preview's last hit is shown even when it came before the idle loop first looked. */
  previewHitShown: 'preview-hit-shown',
  /**
   * The instance's ceiling on an agent's time (SVC_MAX_RUN_MINUTES): a run dispatched by a newer
   * API but first run by an older worker recorded no timer for it.
   */
  runTimeCeiling: 'run-time-ceiling',
  /**
   * Both watchdogs (duration, silence) on one timer behind this one patch, instead of two timers
   * behind silenceWatchdog and runTimeCeiling: each patched() costs a marker and an upsert.
   */
  runWatchdogs: 'run-watchdogs',
  /**
   * The startAgent activity writes the run's `running` projection (no local activity in the task
   * after it). Asked before the start, where the watchdogs apply, and it stands for runWatchdogs
   * too: a run asks one patch, not two.
   */
  startProjectsRunning: 'start-projects-running',
  /**
   * A run's first start is one activity that cuts the workspace too (prepareAndStartAgent): one
   * workflow task and one activity less. Asked before the workspace, where startProjectsRunning
   * was, and it stands for that one (and so for runWatchdogs): a run still asks one patch.
   */
  startPreparesWorkspace: 'start-prepares-workspace',
} as const;
