// `svc db migrate-to-postgres`: the command around db/sqlite-to-postgres.ts, which does the work.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, Option, UsageError } from 'clipanion';
import * as t from 'typanion';
import { EXIT, SvcCommand } from '../../base-command.ts';

/** Every SQLite database file starts with these 16 bytes. */
const SQLITE_HEADER = 'SQLite format 3\u0000';

export class DbMigrateToPostgresCommand extends SvcCommand {
  static override paths = [['db', 'migrate-to-postgres']];

  static override usage = Command.Usage({
    category: 'Operations',
    description: 'copy the embedded SQLite read model into an empty PostgreSQL database, once',
    details: `
      Stop svc first: the copy is a snapshot, and rows written afterwards stay behind.

      Refuses a target that holds svc data or tables svc does not own. Creates the schema on the target with svc's own
      PostgreSQL migrations, then copies every table of the read model in batches (\`--batch-size\`, default 1000)
      inside one transaction, printing a progress line per table on stderr; it verifies every table's row count and
      moves serial sequences past the copied ids before it commits. A failure rolls the copy back: the target keeps
      svc's schema but no rows, and the command can run again. The SQLite file is only read.

      The source must be at this svc version's schema: start this version on it once first if it is older.

      Prints \`{"ok": true, "tables": [{"table", "rows"}], "sequences", "migrations",
      "replacedNulCharacters"}\` (or a summary with \`--output pretty\`). Then start svc with \`DATABASE_URL\` set to
      the target. Exit codes: 0 copied, 2 usage (a missing or invalid \`--from\`/\`--to\`), 1 refused or failed.
    `,
    examples: [
      [
        'Move a data directory to PostgreSQL',
        '$0 db migrate-to-postgres --from .svc-data/svc.sqlite --to postgres://svc@db.internal/svc',
      ],
    ],
  });

  from = Option.String('--from', { required: true, description: 'the SQLite read model (e.g. <data dir>/svc.sqlite)' });
  to = Option.String('--to', { required: true, description: 'a postgres:// URL of an empty database' });
  batchSize = Option.String('--batch-size', '1000', {
    description: 'rows per batch (default 1000)',
    validator: t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(1, 10_000)]),
  });

  protected async run(): Promise<number> {
    const from = resolve(this.from);
    if (!isSqliteFile(from)) throw new UsageError(`--from ${from} is not a SQLite database file`);
    if (!/^postgres(ql)?:\/\//i.test(this.to)) throw new UsageError('--to must be a postgres:// or postgresql:// URL');
    // Loaded here: the ORM and pg are more than the other commands need.
    const { migrateSqliteToPostgres, MigrationRefusedError, redactUrl } =
      await import('../../../db/sqlite-to-postgres.ts');
    const started = Date.now();
    const batches = Number(this.batchSize);
    try {
      const report = await migrateSqliteToPostgres({
        from,
        to: this.to,
        batchSize: batches,
        onProgress: ({ table, copied, total, elapsedMs }) => {
          // A line per table, and every ten batches on a big one.
          if (copied === total || (copied / batches) % 10 === 0)
            this.context.stderr.write(`copied ${table}: ${copied}/${total} rows (${(elapsedMs / 1000).toFixed(1)}s)\n`);
        },
      });
      const rows = report.tables.reduce((sum, table) => sum + table.rows, 0);
      if (this.output === 'pretty') {
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        this.line(`migrated ${rows} rows in ${report.tables.length} tables to ${redactUrl(this.to)} in ${seconds}s`);
        if (report.sequences.length) this.line(`sequences reset: ${report.sequences.join(', ')}`);
        if (report.replacedNulCharacters)
          this.line(`${report.replacedNulCharacters} NUL characters replaced by U+FFFD (PostgreSQL cannot store them)`);
        this.line(`next: start svc with DATABASE_URL=${redactUrl(this.to)}`);
      } else this.line({ ok: true, from, to: redactUrl(this.to), ...report });
      return EXIT.ok;
    } catch (error) {
      if (!(error instanceof MigrationRefusedError)) throw error;
      if (error.code === 'usage') throw new UsageError(error.message);
      this.context.stderr.write(`svc: [${error.code}] ${error.message}\n`);
      if (error.hint) this.context.stderr.write(`  hint: ${error.hint}\n`);
      return EXIT.failed;
    }
  }
}

function isSqliteFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    const header = Buffer.alloc(16);
    const fd = openSync(path, 'r');
    try {
      readSync(fd, header, 0, 16, 0);
    } finally {
      closeSync(fd);
    }
    return header.toString('latin1') === SQLITE_HEADER;
  } catch {
    return false;
  }
}
