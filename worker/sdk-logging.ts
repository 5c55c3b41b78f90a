// The Temporal SDK's log (worker lifecycle, workflow and activity logs) as svc's structured lines:
// Temporal's own run id is renamed `temporalRunId`, so `runId` means svc's run (the workflow id of
// a runWorkflow) in every line svc writes, and task tokens never reach the log.
import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import { logger, type LogLevelName } from '../platform/logger.ts';

const SDK_LEVEL: Record<LogLevelName, LogLevel> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
  fatal: 'ERROR',
  silent: 'ERROR',
};

const PINO_LEVEL: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Temporal's log attributes with svc's names: `runId`/`planRunId` for svc's workflows. */
export function sdkLogFields(meta: Record<string, unknown> = {}): Record<string, unknown> {
  const { runId, workflowRunId, taskToken: _secretish, ...rest } = meta;
  const temporalRunId = workflowRunId ?? runId;
  const svcIds =
    rest.workflowType === 'runWorkflow'
      ? { runId: rest.workflowId }
      : rest.workflowType === 'planRunWorkflow'
        ? { planRunId: rest.workflowId }
        : {};
  return { component: 'temporal-sdk', ...rest, ...(temporalRunId ? { temporalRunId } : {}), ...svcIds };
}

/** The SDK logger for Runtime.install: same level and destination as the rest of the process. */
export function sdkLogger(level: LogLevelName): DefaultLogger {
  return new DefaultLogger(SDK_LEVEL[level], (entry: LogEntry) =>
    logger()[PINO_LEVEL[entry.level]](sdkLogFields(entry.meta as Record<string, unknown>), entry.message),
  );
}

export function sdkLogLevel(level: LogLevelName): LogLevel {
  return SDK_LEVEL[level];
}
