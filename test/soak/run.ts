// `npm run soak`: the soak at full size (5,000 runs over about an hour) on the production topology.
// Prints the samples and the verdict; exits 1 unless memory and disk stay flat after warm-up
// (within 10 %) and every run ended as it should, once. Not part of `npm test`.
//   node test/soak/run.ts [--runs 5000] [--minutes 60]
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { runSoak } from './soak.ts';

const option = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
// Every worker (re)start would bundle the workflow code again: build it once.
const bundle = join(tmpdir(), `svc-soak-bundle-${process.pid}.js`);
writeFileSync(bundle, (await buildWorkflowBundle()).code);
process.env.SVC_WORKFLOW_BUNDLE = bundle;
process.env.SVC_LOG_LEVEL ??= 'ERROR';

const report = await runSoak({
  runs: option('runs', 5000),
  minutes: option('minutes', 60),
  log: (line) => console.log(`${new Date().toISOString()} ${line}`),
});
writeFileSync('soak-results.json', JSON.stringify(report, null, 2));
const unflat = Object.entries(report.flat).filter(([, figure]) => !figure.flat);
console.log(JSON.stringify({ ...report, samples: `${report.samples.length} (soak-results.json)` }, null, 2));
console.log(
  `soak: ${report.runs} runs in ${report.seconds} s, ended ${JSON.stringify(report.ended)}, ` +
    `${report.wrong.length} wrong; ${unflat.length ? `not flat: ${unflat.map(([name]) => name).join(', ')}` : 'flat'}`,
);
process.exit(report.wrong.length === 0 && unflat.length === 0 ? 0 : 1);
