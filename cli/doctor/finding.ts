// What every check of `svc doctor` answers (local-checks.ts, agent-checks.ts, sandbox-checks.ts).
/** One check's outcome; `detail` is what `--verbose` adds to a passing check. */
export interface Finding {
  name: string;
  level: 'ok' | 'warn' | 'fail';
  message?: string;
  hint?: string;
  detail?: string;
}
