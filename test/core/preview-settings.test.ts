// The operator's preview settings (platform/preview-settings.ts): defaults, and a bad value stops
// start-up with a message naming the variable rather than starting a proxy that cannot work.
import test from 'ava';
import { parsePreviewSettings } from '../../platform/preview-settings.ts';

test('defaults: path mode, the proxy beside the API, loopback worker ports, 30m idle, 8h lifetime', (t) => {
  t.like(parsePreviewSettings({}, 8080), {
    mode: 'path',
    host: null,
    proxyPort: 8081,
    bind: '127.0.0.1',
    workerHost: '127.0.0.1',
    firstPort: 30000,
    lastPort: 31000,
    idleTtlMs: 30 * 60_000,
    maxLifetimeMs: 8 * 3600_000,
    maxLive: 20,
  });
  t.is(parsePreviewSettings({}, 0).proxyPort, 0, 'an API on any port: the proxy on any port');
  // Bound to every address, a worker still names one the API can connect to.
  t.is(parsePreviewSettings({ SVC_PREVIEW_BIND: '0.0.0.0' }, 8080).workerHost, '127.0.0.1');
  t.is(
    parsePreviewSettings({ SVC_PREVIEW_BIND: '0.0.0.0', SVC_PREVIEW_WORKER_HOST: '10.0.0.5' }, 8080).workerHost,
    '10.0.0.5',
  );
});

test('a bad setting is refused with the variable named', (t) => {
  const refused = (env: Record<string, string>, pattern: RegExp) =>
    t.throws(() => parsePreviewSettings(env, 8080), { message: pattern });
  refused({ SVC_PREVIEW_MODE: 'subdomain' }, /SVC_PREVIEW_HOST/);
  refused({ SVC_PREVIEW_MODE: 'wildcard' }, /SVC_PREVIEW_MODE/);
  refused({ SVC_PREVIEW_PORT_RANGE: '31000-30000' }, /SVC_PREVIEW_PORT_RANGE/);
  refused({ SVC_PREVIEW_PORT_RANGE: '0-10' }, /SVC_PREVIEW_PORT_RANGE/);
  refused({ SVC_PREVIEW_PORT: '70000' }, /SVC_PREVIEW_PORT must/);
  refused({ SVC_PREVIEW_MAX_LIVE: '0' }, /SVC_PREVIEW_MAX_LIVE/);
  refused({ SVC_PREVIEW_IDLE_TTL: '30 minutes' }, /SVC_PREVIEW_IDLE_TTL/);
  // Past a week, the supervisor's backstop timer would not hold (Node fires long timers at once).
  refused({ SVC_PREVIEW_MAX_LIFETIME: '720h' }, /at most 168h/);
  t.is(parsePreviewSettings({ SVC_PREVIEW_MAX_LIFETIME: '168h' }, 8080).maxLifetimeMs, 168 * 3600_000);
  t.is(
    parsePreviewSettings({ SVC_PREVIEW_MODE: 'subdomain', SVC_PREVIEW_HOST: '.Previews.Example.com.' }, 1).host,
    'previews.example.com',
  );
});
