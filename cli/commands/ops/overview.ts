import { Command, Option } from 'clipanion';
import { RETENTION_KIND_LABELS, RETENTION_KINDS } from '../../../core/retention-policy.ts';
import * as t from 'typanion';
import type { z } from 'zod';
import type { overviewResponse } from '../../../api/routes/ops.schema.ts';
import { RUN_STATES } from '../../../core/run-states.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import { usd } from '../analytics/analytics-command.ts';

type Overview = z.output<typeof overviewResponse>;

const WINDOWS = ['24h', '7d', '30d'] as const;

export class OpsOverviewCommand extends RemoteCommand {
  static override paths = [['ops'], ['ops', 'overview']];

  static override usage = Command.Usage({
    category: 'Operations',
    description: "the instance at a glance: the window's runs, spend and delivery, and the services' health",
    details: `
      GET /ops/overview. NDJSON prints the whole answer as one line. \`--output pretty\` prints one line each
      for the runs (created in the window, per state, and every queued or running run now), the spend, the
      delivery (branches pushed, PRs opened and merged) and the services (database and Temporal reachable, open
      streams), then one line per worker host's last retention pass (what it removed, the disk it gave back).
      Without an operator token on a public instance, there is no USD figure. Exit 0 whatever the
      services' health: \`svc doctor\` is the check that fails.
    `,
    examples: [
      ['The last 24 hours', '$0 ops --output pretty'],
      ['The last 7 days, as JSON', '$0 ops --window 7d'],
    ],
  });

  window = Option.String('--window', '24h', {
    description: `the window: ${WINDOWS.join(', ')} (default 24h)`,
    validator: t.isEnum(WINDOWS),
  });

  protected async run(): Promise<number> {
    const overview = await this.client.request<Overview>('GET', `/ops/overview?window=${this.window}`);
    if (this.output !== 'pretty') {
      this.line(overview);
      return EXIT.ok;
    }
    const { runs, spend, delivery, services } = overview;
    const states = RUN_STATES.map((state) => `${state} ${runs.byState[state] ?? 0}`).join(', ');
    const mebibytes = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
    const reachable = (ok: boolean) => (ok ? 'reachable' : 'UNREACHABLE');
    this.line(`ops overview, last ${overview.window} (at ${overview.generatedAt})`);
    this.line(`runs: ${runs.total} created — ${states}; ${runs.nonTerminal} queued or running now`);
    const usdOver = 'costUsd' in spend ? `${usd(spend.costUsd)} over ` : '';
    this.line(`spend: ${usdOver}${spend.windowRuns} runs (${spend.priced} priced)`);
    this.line(
      `delivery: ${delivery.branchesPushed} branches pushed, ${delivery.prsOpened} PRs opened, ` +
        `${delivery.prsMerged} merged`,
    );
    this.line(
      `services: runtime ${services.runtime}, ${services.dbBackend} ${reachable(services.dbReachable)}, ` +
        `Temporal ${reachable(services.temporalReachable)}, streams ${services.lifecycleStreams} lifecycle / ` +
        `${services.runEventStreams} run events`,
    );
    for (const pass of overview.retention) {
      const removed = RETENTION_KINDS.filter((kind) => (pass.removed[kind] ?? 0) > 0).map(
        (kind) => `${pass.removed[kind]} ${RETENTION_KIND_LABELS[kind]}`,
      );
      const bytes = Object.values(pass.reclaimedBytes).reduce((sum, each) => sum + each, 0);
      this.line(
        `retention on ${pass.host}: last pass ${pass.finishedAt}, removed ${removed.join(', ') || 'nothing'}` +
          `, ${mebibytes(bytes)} given back`,
      );
    }
    return EXIT.ok;
  }
}
