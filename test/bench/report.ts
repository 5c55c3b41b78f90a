// The bench's report: a table on stdout, and every figure with its detail in bench-results.json
// (beside package.json; not committed), stamped with the machine it was measured on.
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

export interface Figure {
  name: string;
  value: number;
  target: string;
  ok: boolean;
  detail: Record<string, number | string>;
}

/** Prints the table, writes bench-results.json; answers how many figures missed their target. */
export function printReport(figures: Figure[], file = 'bench-results.json'): number {
  const width = Math.max(...figures.map((figure) => figure.name.length), 6);
  const lines = [
    `${'figure'.padEnd(width)}  ${'value'.padStart(10)}  ${'target'.padEnd(10)}  ok`,
    ...figures.map(
      (figure) =>
        `${figure.name.padEnd(width)}  ${String(figure.value).padStart(10)}  ${figure.target.padEnd(10)}  ` +
        `${figure.ok ? 'yes' : 'NO'}`,
    ),
  ];
  console.log(lines.join('\n'));
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
  writeFileSync(file, `${JSON.stringify({ measuredAt: new Date().toISOString(), machine, figures }, null, 2)}\n`);
  const failed = figures.filter((figure) => !figure.ok).length;
  console.log(`${figures.length - failed} passed, ${failed} failed (${file})`);
  return failed;
}
