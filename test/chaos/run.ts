// `npm run chaos`: the chaos suite at full size. Prints what happened and the figures; exits 1
// unless every run and plan-run reached its correct terminal state.
//   node test/chaos/run.ts [--runs 100] [--plan-runs 4]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { runChaos } from './chaos.ts';

const option = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
};
// Every worker (re)start would bundle the workflow code again: build it once.
const bundle = join(tmpdir(), `svc-chaos-bundle-${process.pid}.js`);
writeFileSync(bundle, (await buildWorkflowBundle()).code);
process.env.SVC_WORKFLOW_BUNDLE = bundle;
process.env.SVC_LOG_LEVEL ??= 'ERROR';

const report = await runChaos({
  runs: option('runs', 100),
  planRuns: option('plan-runs', 4),
  log: (line) => console.log(`${new Date().toISOString()} ${line}`),
});
const total = report.runs + report.planRuns;
console.log(JSON.stringify(report, null, 2));
console.log(
  `chaos: ${report.correct}/${total} correct (${((100 * report.correct) / total).toFixed(1)} %), ` +
    `disruptions ${Object.entries(report.disruptions)
      .map(([name, count]) => `${name} ×${count}`)
      .join(', ')}, ` +
    `settled in ${report.settleSeconds} s, ${report.totalSeconds} s in all`,
);
process.exit(report.problems.length === 0 ? 0 : 1);
