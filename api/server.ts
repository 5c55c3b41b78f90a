// The API process: serves the routes (composed with their services in api/compose-routes.ts) over
// HTTP, beside the preview proxy, with a clean shutdown.
import type { Server } from 'node:http';
import { http } from '../platform/node-http.ts';
import type { Socket } from 'node:net';
import { RunsRepository } from '../db/repositories/runs.repository.ts';
import { SpectatorLimits } from './spectator-limits.ts';
import { isTerminalRunState } from '../core/run-states.ts';
import { createApiApp } from './app.ts';
import { loadDashboard } from './middleware/dashboard.ts';
import { fileURLToPath } from 'node:url';
import { logger } from '../platform/logger.ts';
import { DEFAULT_LIFECYCLE_SETTINGS, LifecycleHub } from './services/lifecycle-hub.ts';
import { RunEventsService } from './services/run-events.service.ts';
import { PreviewCookies } from './preview/preview-cookie.ts';
import { startPreviewProxy } from './preview/preview-proxy.ts';
import { parsePreviewSettings } from '../platform/preview-settings.ts';
import { PortInUseError } from '../platform/port-in-use.ts';
import { allRoutes } from './compose-routes.ts';
import type { ApiServerDeps } from './server-deps.ts';

export type { ApiServerDeps } from './server-deps.ts';

/** Where `npm run build:web` (run by the install step) puts the dashboard. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../web/dist', import.meta.url));

/** The most of a request's head the API reads (Node's default: 16 KiB). */
export const API_MAX_HEADER_BYTES = 64 * 1024;

export interface RunningApi {
  url: string;
  /** The preview proxy's origin (path mode: previews at /p/<runId>/ there). */
  previewUrl: string;
  server: Server;
  close(): Promise<void>;
}

export { documentedRoutes } from './compose-routes.ts';

export async function startApi(deps: ApiServerDeps): Promise<RunningApi> {
  const events = new RunEventsService(deps.readModel, { maxFollowing: deps.lifecycle?.maxStreams });
  const lifecycle = new LifecycleHub(deps.readModel, {
    ...DEFAULT_LIFECYCLE_SETTINGS,
    pollMs: 1000,
    ...deps.lifecycle,
  });
  await lifecycle.start();
  const isRunActive = async (runId: string) => {
    const state = await new RunsRepository(deps.readModel).stateOf(runId);
    return state !== null && !isTerminalRunState(state);
  };
  const dashboard = await loadDashboard(deps.webDir ?? DEFAULT_WEB_DIR);
  if (!dashboard)
    logger({ component: 'api' }).warn('the web dashboard is not built (npm run build:web): the API serves no pages');
  const preview = await startPreviewProxy({
    settings: deps.preview ?? parsePreviewSettings({}, 0),
    cookies: new PreviewCookies(deps.auth.operatorToken),
    host: deps.host,
    runs: new RunsRepository(deps.readModel),
    hit: (runId, at) => void deps.temporal.previewHit(runId, at),
  });
  let ownUrl = '';
  const app = createApiApp({
    dashboard,
    allowedHosts: deps.allowedHosts,
    auth: {
      ...deps.auth,
      isRunActive,
      spectatorLimits: deps.spectatorLimits && new SpectatorLimits(deps.spectatorLimits),
    },
    routes: allRoutes(
      deps,
      events,
      lifecycle,
      [deps.auth.operatorToken],
      () => preview.port,
      () => ownUrl,
    ),
    logger: { error: (message, meta) => logger({ component: 'api' }).error(meta, message) },
  });
  // Cookies are per host, not per port: a browser sends the API every cookie of its host (previews'
  // included), and Node's 16 KiB default would answer a full jar 431.
  const server = http.createServer({ maxHeaderSize: API_MAX_HEADER_BYTES }, app.callback());
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new PortInUseError(`${deps.host}:${deps.port}`, 'the API', 'give this one its own with --port or SVC_PORT')
          : error,
      ),
    );
    server.listen(deps.port, deps.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : deps.port;
  const host = deps.host.includes(':') ? `[${deps.host}]` : deps.host;
  ownUrl = `http://${host}:${port}`;
  return {
    url: ownUrl,
    previewUrl: `http://${host}:${preview.port}`,
    server,
    async close() {
      await preview.close();
      // Held-open event streams end first, so their clients see a clean end of stream.
      events.streams.closeAll();
      await lifecycle.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Held-open streams end here; a client mid-request gets its answer first.
      setTimeout(() => sockets.forEach((socket) => socket.destroy()), 2000).unref();
      await closed;
    },
  };
}
