// Settings that must refuse to start rather than run unsafely.
import test from 'ava';
import { loadConfig } from '../../platform/config.ts';

test('SVC_AUTH is token or public; public mode needs an allowlist', (t) => {
  t.is(loadConfig({}).auth.mode, 'token');
  t.throws(() => loadConfig({ SVC_AUTH: 'open' }), { message: /SVC_AUTH must be token or public/ });
  t.throws(() => loadConfig({ SVC_AUTH: 'public' }), { message: /SVC_PUBLIC_ALLOWLIST/ });
  t.deepEqual(loadConfig({ SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'Acme, other/repo' }).auth, {
    mode: 'public',
    publicAllowlist: ['acme', 'other/repo'],
  });
});

test('limits and timings reject nonsense', (t) => {
  t.throws(() => loadConfig({ SVC_SANDBOX_MEMORY_MIB: '8' }), { message: /SVC_SANDBOX_MEMORY_MIB/ });
  t.throws(() => loadConfig({ SVC_PLAN_RUN_MERGE_TIMEOUT_MS: '-5' }), { message: /non-negative integer/ });
  t.is(loadConfig({ SVC_PLAN_RUN_MERGE_POLL_MS: '10' }).planTiming.mergePollMs, 1000);
});
