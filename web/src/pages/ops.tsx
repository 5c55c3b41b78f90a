// The instance at a glance: runs and delivery over a window (the URL holds it), the services svc
// depends on, and what this instance is. The lifecycle stream (or a spectator's poll) keeps the
// overview current; USD, uptime and the database backend reach operators only.
import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { query } from '../api/client.ts';
import { useQuery } from '../api/cache.ts';
import type { Instance, OpsOverview, WebhookList } from '../api/types.ts';
import { identity } from '../api/identity.ts';
import { ErrorBox, Facts, Loading, PageHeader } from '../components/ui.tsx';
import { GitHubIdentityPanel } from '../components/github-identity.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { type Kpi, KpiTiles, Panel } from '../components/analytics-kit.tsx';
import { count, duration, money, relative, httpUrl } from '../format.ts';

const WINDOWS = [
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
] as const;
type OverviewWindow = (typeof WINDOWS)[number][0];
const STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

function runKpis(data: OpsOverview | undefined): Kpi[] {
  const runs = data?.runs;
  return [
    { label: 'Runs created', value: runs && count(runs.total), detail: 'in the window' },
    { label: 'Queued or running', value: runs && count(runs.nonTerminal), detail: 'now, whenever created' },
    ...STATES.map((state) => ({
      label: state[0]!.toUpperCase() + state.slice(1),
      value: runs && count(runs.byState[state] ?? 0),
    })),
  ];
}

function deliveryKpis(data: OpsOverview | undefined): Kpi[] {
  const spend = data?.spend;
  const delivery = data?.delivery;
  return [
    {
      label: 'Spend',
      // Spectators' overview has no USD at all: say so rather than show a zero.
      value: spend && ('costUsd' in spend ? money(spend.costUsd) : '—'),
      detail:
        spend &&
        ('costUsd' in spend
          ? `${count(spend.priced)} of ${count(spend.windowRuns)} runs priced`
          : 'USD for operators only'),
    },
    { label: 'Branches pushed', value: delivery && count(delivery.branchesPushed) },
    { label: 'PRs opened', value: delivery && count(delivery.prsOpened) },
    { label: 'PRs merged', value: delivery && count(delivery.prsMerged) },
  ];
}

function Health({ ok }: { ok: boolean }) {
  return <span class={`badge tone-${ok ? 'good' : 'bad'}`}>{ok ? 'ok' : 'unreachable'}</span>;
}

function Services({ services }: { services: OpsOverview['services'] }) {
  const rows: [string, ComponentChildren, string][] = [
    ['Sandbox runtime', <span class="badge tone-neutral">{services.runtime}</span>, 'where agents run'],
    ['Database', <Health ok={services.dbReachable} />, services.dbBackend],
    ['Temporal', <Health ok={services.temporalReachable} />, 'workflow engine'],
    ['Lifecycle streams', count(services.lifecycleStreams), 'open on this process'],
    ['Run event streams', count(services.runEventStreams), 'open on this process'],
  ];
  return (
    <table class="table">
      <thead>
        <tr>
          <th scope="col">Service</th>
          <th scope="col">Status</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([name, status, detail]) => (
          <tr key={name}>
            <td data-label="Service">{name}</td>
            <td data-label="Status">{status}</td>
            <td data-label="Detail" class="muted">
              {detail}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Each webhook with its deliveries by state (docs/webhooks.md). */
function Webhooks({ list }: { list: WebhookList }) {
  if (!list.webhooks.length) return <p class="muted">None registered (POST /webhooks, or SVC_WEBHOOKS).</p>;
  return (
    <table class="table" data-testid="webhooks">
      <thead>
        <tr>
          <th scope="col">URL</th>
          <th scope="col">Hooks</th>
          <th scope="col">Delivered</th>
          <th scope="col">Retrying</th>
          <th scope="col">Failed</th>
        </tr>
      </thead>
      <tbody>
        {list.webhooks.map((webhook) => (
          <tr key={webhook.id}>
            <td data-label="URL" class="mono" title={webhook.description ?? webhook.id}>
              {webhook.url}
            </td>
            <td data-label="Hooks">{webhook.hooks?.join(', ') ?? 'all'}</td>
            <td data-label="Delivered">{count(webhook.deliveries.delivered)}</td>
            <td data-label="Retrying">{count(webhook.deliveries.retrying + webhook.deliveries.pending)}</td>
            <td data-label="Failed">{count(webhook.deliveries.failed)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function InstanceFacts({ instance }: { instance: Instance }) {
  const operatorView = 'uptimeSeconds' in instance ? instance : undefined;
  return (
    <Facts
      items={[
        ['Name', instance.name],
        ['Version', <span class="mono">{instance.version}</span>],
        ['Auth mode', instance.authMode === 'public' ? 'public (spectators may read)' : 'token'],
        ['Uptime', operatorView ? duration(operatorView.uptimeSeconds * 1000) : 'operators only'],
        [
          'Public URL',
          instance.publicUrl ? (
            <a href={httpUrl(instance.publicUrl)} rel="noopener noreferrer">
              {instance.publicUrl}
            </a>
          ) : (
            <span class="muted">not set</span>
          ),
        ],
        ['Runtime', instance.runtime],
        ['Database', operatorView ? operatorView.dbBackend : 'operators only'],
        [
          'Concurrent runs',
          operatorView ? (operatorView.admission?.maxConcurrentRuns ?? 'no instance limit') : 'operators only',
        ],
      ]}
    />
  );
}

export function OpsPage() {
  useTitle('Ops');
  const { query: params, route, path } = useLocation();
  const span: OverviewWindow = WINDOWS.find(([value]) => value === params.window)?.[0] ?? '24h';
  const overview = useQuery<OpsOverview>(`/ops/overview${query({ window: span })}`);
  const instance = useQuery<Instance>('/instance');
  const webhooks = useQuery<WebhookList>(identity.value.kind === 'operator' ? '/webhooks' : null);
  const now = useNow(true, 30_000);
  const data = overview.data;

  return (
    <section>
      <PageHeader title="Ops" />
      <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Overview window">
        <label>
          Window
          <select
            value={span}
            onChange={(event) => {
              const chosen = event.currentTarget.value;
              route(`${path}${query({ window: chosen === '24h' ? undefined : chosen })}`);
            }}
          >
            {WINDOWS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </form>
      <p class="muted window-note" aria-live="polite">
        {data ? `Computed ${relative(data.generatedAt, now)}.` : '\u00a0'}
      </p>
      <ErrorBox error={overview.error} title="Could not load the overview" />
      {overview.error ? null : (
        <>
          <KpiTiles items={runKpis(data)} label="Runs" />
          <KpiTiles items={deliveryKpis(data)} label="Spend and delivery" />
        </>
      )}
      <div class="chart-grid">
        <Panel id="services-title" title="Services">
          {data ? <Services services={data.services} /> : overview.error ? null : <Loading lines={6} />}
        </Panel>
        <Panel id="instance-title" title="Instance">
          <ErrorBox error={instance.error} title="Could not load the instance" />
          {instance.data ? <InstanceFacts instance={instance.data} /> : instance.error ? null : <Loading lines={4} />}
        </Panel>
        {identity.value.kind === 'operator' ? (
          <Panel id="github-title" title="GitHub">
            <GitHubIdentityPanel />
          </Panel>
        ) : null}
        {identity.value.kind === 'operator' ? (
          <Panel id="webhooks-title" title="Webhooks">
            <ErrorBox error={webhooks.error} title="Could not load the webhooks" />
            {webhooks.data ? <Webhooks list={webhooks.data} /> : webhooks.error ? null : <Loading lines={2} />}
          </Panel>
        ) : null}
      </div>
    </section>
  );
}
