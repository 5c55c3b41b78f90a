// The shell: header and navigation, who is signed in, how the tab stays fresh, and the pages.
// Dashboard paths live under /ui/ (and /): the API owns every other namespace (api/middleware/dashboard.ts).
import { useEffect } from 'preact/hooks';
import { lazy, LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { identity, isOperator } from './api/identity.ts';
import { liveMode, startLiveUpdates } from './api/lifecycle.ts';
import { notReady, watchReadiness } from './api/readiness.ts';
import { signOut } from './api/session.ts';
import { ErrorBox, Loading } from './components/ui.tsx';
import { RunsPage } from './pages/runs.tsx';
import { RunPage } from './pages/run.tsx';
import { DispatchPage } from './pages/dispatch.tsx';
import { PlanRunsPage } from './pages/plan-runs.tsx';
import { PlanRunPage } from './pages/plan-run.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import { ProjectPage } from './pages/project.tsx';
import { ProjectSecretsPage } from './pages/project-secrets.tsx';
import { AgentsPage } from './pages/agents.tsx';
import { OpsPage } from './pages/ops.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { NotFoundPage } from './pages/not-found.tsx';

// The charts (uPlot) load with the analytics page only: the runs page, where most visits start,
// stays small.
const AnalyticsPage = lazy(() => import('./pages/analytics.tsx').then((module) => module.AnalyticsPage));

const NAV: { href: string; label: string; operatorOnly?: boolean }[] = [
  { href: '/ui/runs', label: 'Runs' },
  { href: '/ui/dispatch', label: 'Dispatch', operatorOnly: true },
  { href: '/ui/plan-runs', label: 'Plan-runs' },
  { href: '/ui/projects', label: 'Projects' },
  { href: '/ui/agents', label: 'Agents' },
  { href: '/ui/analytics', label: 'Analytics' },
  { href: '/ui/ops', label: 'Ops' },
];

const LIVE_LABELS = {
  connecting: 'connecting…',
  live: 'live',
  polling: 'refreshing every 10 s',
  offline: 'reconnecting…',
  degraded: 'degraded',
} as const;

/** The header's dot: the stream's state, except that a connected tab of a server not ready is degraded. */
function shownLiveMode(): keyof typeof LIVE_LABELS {
  return notReady.value && (liveMode.value === 'live' || liveMode.value === 'polling') ? 'degraded' : liveMode.value;
}

function Header() {
  const { path } = useLocation();
  const who = identity.value;
  const operator = isOperator(who);
  return (
    <header class="topbar">
      <a class="brand" href="/ui/runs">
        svc
      </a>
      <nav class="mainnav" aria-label="Main">
        {NAV.filter((item) => operator || !item.operatorOnly).map((item) => (
          <a
            key={item.href}
            href={item.href}
            aria-current={
              path === item.href || path.startsWith(`${item.href}/`) || (path === '/' && item.href === '/ui/runs')
                ? 'page'
                : undefined
            }
          >
            {item.label}
          </a>
        ))}
      </nav>
      <div class="session">
        {who.kind === 'operator' || who.kind === 'spectator' ? (
          <span
            class={`live live-${shownLiveMode()}`}
            title={notReady.value ? `svc is not ready: ${notReady.value}` : 'How this page stays up to date'}
            data-live={shownLiveMode()}
          >
            {LIVE_LABELS[shownLiveMode()]}
          </span>
        ) : null}
        {who.kind === 'operator' ? (
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        ) : who.kind === 'spectator' ? (
          <a href="/ui/sign-in">Sign in</a>
        ) : null}
      </div>
    </header>
  );
}

function Pages() {
  const who = identity.value;
  useEffect(() => {
    if (who.kind !== 'operator' && who.kind !== 'spectator') return;
    const stopLive = startLiveUpdates(who.kind === 'operator');
    const stopReadiness = watchReadiness();
    return () => {
      stopLive();
      stopReadiness();
    };
  }, [who.kind]);
  if (who.kind === 'loading') return <Loading lines={6} />;
  if (who.kind === 'unreachable') return <ErrorBox error={who.error} title="svc is not answering" />;
  if (who.kind === 'signed-out') return <SignInPage refused={who.refused} />;
  return (
    <Router>
      <Route path="/" component={RunsPage} />
      <Route path="/ui" component={RunsPage} />
      <Route path="/ui/runs" component={RunsPage} />
      <Route path="/ui/runs/:id" component={RunPage} />
      <Route path="/ui/dispatch" component={DispatchPage} />
      <Route path="/ui/plan-runs" component={PlanRunsPage} />
      <Route path="/ui/plan-runs/:id" component={PlanRunPage} />
      <Route path="/ui/projects" component={ProjectsPage} />
      <Route path="/ui/projects/:id" component={ProjectPage} />
      <Route path="/ui/projects/:id/secrets" component={ProjectSecretsPage} />
      <Route path="/ui/agents" component={AgentsPage} />
      <Route path="/ui/analytics" component={AnalyticsPage} />
      <Route path="/ui/ops" component={OpsPage} />
      <Route path="/ui/sign-in" component={SignInPage} />
      <Route default component={NotFoundPage} />
    </Router>
  );
}

export function App() {
  return (
    <LocationProvider>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Header />
      <main id="main" tabIndex={-1}>
        <Pages />
      </main>
    </LocationProvider>
  );
}
