// Where a run or a plan-run is seen beyond the API: its dashboard page (at the instance's public
// URL, else where this API listens) and, when svc knows the Temporal UI, its workflow's page there.
import type { IdKind } from '../../core/ids.ts';

/** The dashboard's page of each kind with a page of its own (web/src/app.tsx). */
const PAGES = { run: 'runs', planRun: 'plan-runs' } as const satisfies Partial<Record<IdKind, string>>;
export type LinkedKind = keyof typeof PAGES;

export interface Links {
  temporalUi: string | null;
  dashboard: string;
}

/** The links of a run or a plan-run (its id is its workflow's id); a spectator gets no Temporal UI. */
export type RunLinks = (kind: LinkedKind, id: string, spectator?: boolean) => Links;

/** The dashboard's page of a run or a plan-run. */
export function dashboardPath(kind: LinkedKind, id: string): string {
  return `/ui/${PAGES[kind]}/${encodeURIComponent(id)}`;
}

export function runLinks(settings: {
  temporalUi: { url: string | undefined; namespace: string } | undefined;
  /** Read at each call: the API's own address is known only once it listens. */
  dashboardBase: () => string;
}): RunLinks {
  const { temporalUi } = settings;
  return (kind, id, spectator = false) => ({
    temporalUi:
      temporalUi?.url && !spectator
        ? `${temporalUi.url}/namespaces/${encodeURIComponent(temporalUi.namespace)}/workflows/${encodeURIComponent(id)}`
        : null,
    dashboard: `${settings.dashboardBase()}${dashboardPath(kind, id)}`,
  });
}
