// One `svc serve` per data directory. The serve holds an flock on <data>/instance.lock for its
// life (the kernel drops it when the process dies, however it dies) and says who it is in
// <data>/instance.json (pid, URL, Temporal address). A second serve finds the lock taken and
// refuses, naming the first from that record; a record left by a dead process blocks nothing, as
// the lock is the only test. `svc worker`s take no lock: they join whatever instance holds the
// directory (decision 0003). API replicas on an external Temporal and PostgreSQL keep nothing of
// their own there, so they hold the lock shared: any number of them, and no exclusive serve beside
// them (decision 0046).
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dataPaths } from '../platform/config.ts';
import { tryHoldFileLock } from '../platform/file-lock.ts';
import { isProcessAlive } from '../platform/processes.ts';

export interface InstanceRecord {
  pid: number;
  /** The API's URL once it listens; null while it starts. */
  url: string | null;
  /** The Temporal it uses (its embedded server's address, or TEMPORAL_ADDRESS); null while it starts. */
  temporalAddress: string | null;
  startedAt: string;
}

export class DataDirInUseError extends Error {
  readonly holder: InstanceRecord | undefined;

  constructor(dataDir: string, holder: InstanceRecord | undefined) {
    const who = holder
      ? `the svc serve with pid ${holder.pid}${holder.url ? ` at ${holder.url}` : ' (still starting)'}`
      : 'another svc serve';
    super(`data directory ${dataDir} is in use by ${who}: stop it first, or give this one its own SVC_DATA_DIR`);
    this.name = 'DataDirInUseError';
    this.holder = holder;
  }
}

export interface InstanceClaim {
  /** Adds what is known once it is up (the API's URL, Temporal's address) to the record. */
  announce(fields: Partial<Pick<InstanceRecord, 'url' | 'temporalAddress'>>): void;
  release(): Promise<void>;
}

/**
 * `exclusive`: the serve keeps an embedded Temporal or a SQLite read model in the directory, so it
 * must be its only serve. `shared`: a replica whose Temporal and database are elsewhere.
 */
export type ClaimMode = 'exclusive' | 'shared';

/** Claims `dataDir` for this process's `svc serve`, or throws DataDirInUseError naming its holder. */
export async function claimDataDir(dataDir: string, mode: ClaimMode = 'exclusive'): Promise<InstanceClaim> {
  const lock = await tryHoldFileLock(dataPaths.instanceLock(dataDir), mode);
  if (!lock) throw new DataDirInUseError(dataDir, readInstanceRecord(dataDir));
  let record: InstanceRecord = {
    pid: process.pid,
    url: null,
    temporalAddress: null,
    startedAt: new Date().toISOString(),
  };
  const recordFile = dataPaths.instanceRecord(dataDir);
  const write = () => {
    writeFileSync(`${recordFile}.tmp`, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    renameSync(`${recordFile}.tmp`, recordFile);
  };
  write();
  return {
    announce(fields) {
      record = { ...record, ...fields };
      write();
    },
    async release() {
      // Replicas sharing the directory each wrote the record in turn: the last one names a live one.
      if (mode === 'exclusive' || readInstanceRecord(dataDir)?.pid === process.pid) rmSync(recordFile, { force: true });
      await lock.release();
    },
  };
}

/** The record of the serve holding `dataDir`, if one is there and its process lives. */
export function readInstanceRecord(dataDir: string): InstanceRecord | undefined {
  const file = dataPaths.instanceRecord(dataDir);
  if (!existsSync(file)) return undefined;
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as InstanceRecord;
    return Number.isInteger(record.pid) && isProcessAlive(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}
