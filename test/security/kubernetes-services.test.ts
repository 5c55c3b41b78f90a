// A run's services on Kubernetes are containers of the run's pod, as hostile as the agent: each
// gets the agent container's hardening under the restricted Pod Security Standard (non-root, every
// capability dropped, no privilege escalation, a read-only root, the pod's seccomp profile and uid),
// a share of the run's limits (together never more than the run's), and only the env its file names:
// no svc credential, no Secret of the operator's.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servicePlan } from '../../core/environment-services.ts';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';
import { sandboxServices } from '../../sandbox/backends/container/container-services.ts';
import { sandboxLaunch } from '../../sandbox/host/sandbox-launch.ts';
import { restrictedViolations } from '../support/pod-security.ts';

const SVC_TOKEN = 'svc-run-token-not-for-services';

function podWithService() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-kube-services-'));
  const settings = parseSandboxSettings({
    SVC_SANDBOX: 'kubernetes',
    SVC_KUBERNETES_GATEWAY_HOST: '10.0.0.1',
  });
  settings.kubernetes.podDefaults = {
    ...settings.kubernetes.podDefaults,
    secretEnv: [{ name: 'MODEL_TOKEN', secret: 'model-key', key: 'token' }],
  };
  const service = servicePlan({
    name: 'db',
    image: 'localhost/svc-test-service:1',
    env: { GREETING: 'hello' },
    ports: [5432],
  });
  const { spec } = sandboxLaunch({
    name: 'run_guarded',
    dir,
    launch: { argv: ['true'], cwd: dir, env: { ANTHROPIC_API_KEY: 'sk-agent-only' }, stdin: null },
    isolation: 'kubernetes',
    settings,
    hostId: 100_000,
    memoryLimitMiB: 512,
    cpuMillicores: 500,
    services: sandboxServices('run_guarded', [service]),
    egress: [],
    callback: { baseUrl: 'http://127.0.0.1:1', runId: 'run_guarded', token: SVC_TOKEN },
    dieWithParent: true,
    forbidden: [],
    trustCommand: true,
  });
  return spec.pod!.manifest;
}

test("a service has the agent's hardening and a share of the run's limits; the pod is restricted", (t) => {
  const manifest = podWithService();
  const [agent, service] = manifest.spec!.containers;
  t.is(service?.name, 'service-db');
  t.deepEqual(service!.securityContext, agent!.securityContext);
  t.like(service!.securityContext, {
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
  });
  // The pod's uid and seccomp profile are its containers'; the service names none of its own.
  t.like(manifest.spec!.securityContext, { runAsNonRoot: true, runAsUser: 100_000 });
  t.truthy(manifest.spec!.securityContext!.seccompProfile);
  // The run's 512 MiB and 500m, shared: the pod asks for and may use no more than the run's limits.
  t.deepEqual(agent!.resources, {
    limits: { memory: '256Mi', cpu: '250m' },
    requests: { memory: '256Mi', cpu: '250m' },
  });
  t.deepEqual(service!.resources, agent!.resources);
  t.deepEqual(restrictedViolations(manifest), []);
  t.deepEqual(manifest.spec!.hostAliases, [{ ip: '127.0.0.1', hostnames: ['db'] }]);
  // Its only writable place is a /tmp of its own, not the agent's workspace or svc's files.
  t.deepEqual(
    service!.volumeMounts!.map((mount) => mount.mountPath),
    ['/tmp'],
  );
});

test("a service container's env is its file's and nothing of svc's or the operator's", (t) => {
  const manifest = podWithService();
  const [agent, service] = manifest.spec!.containers;
  t.deepEqual(service!.env, [
    { name: 'HOME', value: '/tmp' },
    { name: 'GREETING', value: 'hello' },
  ]);
  const text = JSON.stringify(service);
  for (const secret of [SVC_TOKEN, 'sk-agent-only', 'model-key', 'SVC_INIT_POD'])
    t.false(text.includes(secret), secret);
  // The agent still has its own: the check above could fail.
  t.true(JSON.stringify(agent).includes('model-key'));
});
