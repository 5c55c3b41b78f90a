import test from 'ava';
import { classifyAgentExit, type AgentExitEvidence } from '../../core/agent-exit.ts';
import { CLEAN_EXIT } from '../support/agent-evidence.ts';

const base: AgentExitEvidence = CLEAN_EXIT;

const cases: [string, Partial<AgentExitEvidence>, string, string | null][] = [
  ['clean exit', {}, 'succeeded', null],
  [
    'missing executable',
    { spawnError: { code: 'ENOENT', message: 'spawn nope ENOENT' }, exitCode: null },
    'failed',
    'spawn_failed',
  ],
  ['non-zero exit after output', { exitCode: 1 }, 'failed', 'crashed'],
  ['non-zero exit, silent', { exitCode: 1, sawOutput: false }, 'failed', 'no_model_response'],
  ['killed by someone else', { exitCode: null, signal: 'SIGKILL' }, 'failed', 'agent_died'],
  ['OOM recorded by the sandbox', { exitCode: null, signal: 'SIGKILL', oomKilled: true }, 'failed', 'oom_killed'],
  [
    'bubblewrap refused',
    { exitCode: 1, sawOutput: false, stderrHead: ['bwrap: No permissions to create new namespace'] },
    'failed',
    'sandbox_failed',
  ],
  [
    'shell could not find the agent',
    { exitCode: 127, sawOutput: false, stderrHead: ['bash: line 1: claude: command not found'] },
    'failed',
    'spawn_failed',
  ],
  [
    'the memory-cgroup wrapper could not exec the agent',
    { exitCode: 127, sawOutput: false, stderrHead: ['sh: 1: exec: /no/agent: not found'] },
    'failed',
    'spawn_failed',
  ],
  ['supervisor vanished', { lost: true, exitCode: null }, 'failed', 'sandbox_run_lost'],
  [
    "a pod's service never ready: the agent never ran, nothing came back",
    {
      exitCode: 125,
      sawOutput: false,
      notHandedBack: true,
      stderrHead: ['svc sandbox: service db was not ready within 3 s'],
    },
    'failed',
    'environment_services_failed',
  ],
  [
    'an agent printing the same line is not the harness (not its exit)',
    { exitCode: 1, stderrHead: ['svc sandbox: service db was not ready within 3 s'] },
    'failed',
    'crashed',
  ],
  ['killed, as bubblewrap reports it (128+9)', { exitCode: 137 }, 'failed', 'agent_died'],
  [
    'a missing executable inside bubblewrap',
    { exitCode: 1, sawOutput: false, stderrHead: ['bwrap: execvp /no/agent: No such file or directory'] },
    'failed',
    'spawn_failed',
  ],
  [
    'the provider failed the last turn',
    { exitCode: 1, providerError: 'API Error: 529 overloaded' },
    'failed',
    'provider_error',
  ],
];

for (const [name, evidence, state, reason] of cases) {
  test(`classifies: ${name}`, (t) => {
    t.deepEqual(classifyAgentExit({ ...base, ...evidence }), { state, failureReason: reason });
  });
}
