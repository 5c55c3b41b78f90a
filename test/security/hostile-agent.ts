// Support for the attack tests: a hostile agent is a `shell` run whose prompt is the attack, and
// what it managed is read back from its output lines, its events and the host it tried to reach.
import { mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { TestStack } from '../support/stack.ts';
import { runEvents, waitForRunState } from '../support/stack.ts';

export interface RunEvent {
  kind: string;
  stream: string | null;
  payload: any;
}

export interface AttackOutcome {
  run: any;
  events: RunEvent[];
  /** The agent's stdout lines, as svc recorded them. */
  stdout: string[];
  /** Every event line, joined: to look for a secret anywhere in what the run shows. */
  everything: string;
}

export async function runAttack(
  svc: Pick<TestStack, 'request'>,
  prompt: string,
  extra: Record<string, unknown> = {},
  timeoutMs = 90_000,
): Promise<AttackOutcome> {
  const response = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt, ...extra } });
  if (response.status !== 201) throw new Error(`dispatch failed: ${response.status} ${response.text}`);
  const run = await waitForRunState(svc, response.body.run.id, undefined, timeoutMs);
  return { run, ...(await eventsOf(svc, run.id)) };
}

export async function eventsOf(svc: Pick<TestStack, 'request'>, runId: string): Promise<Omit<AttackOutcome, 'run'>> {
  const events = (await runEvents(svc, runId)) as RunEvent[];
  return {
    events,
    stdout: events.filter((event) => event.stream === 'stdout').map((event) => String(event.payload.text)),
    everything: events.map((event) => JSON.stringify(event)).join('\n'),
  };
}

/** Probes of each target path: `sees_<label>` (it exists for the agent) and `reads_<label>`. */
export function pathProbes(targets: Record<string, string>): string[] {
  return Object.entries(targets).flatMap(([label, path]) => [
    probe(`sees_${label}`, `test -e '${path}'`),
    probe(`reads_${label}`, `cat '${path}'`),
  ]);
}

/** Every target of `pathProbes` was neither seen nor read. */
export function assertPathsHidden(t: ExecutionContext, stdout: string[], targets: Record<string, string>): void {
  for (const [label, path] of Object.entries(targets)) {
    t.is(reported(stdout, `sees_${label}`), 'no', `the agent sees ${path}`);
    t.is(reported(stdout, `reads_${label}`), 'no', `the agent reads ${path}`);
  }
}

/** The value a probe line `name=value` reported. */
export function reported(stdout: string[], name: string): string | undefined {
  return stdout.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
}

/**
 * A host directory the sandbox cannot see, holding a canary file: if anything the agent wrote ran
 * on the host with svc's rights, `evil.sh` leaves `ran` (and the environment it saw) here.
 */
export function hostTrap(): { dir: string; canary: string; ran: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-trap-'));
  const canary = join(dir, 'canary');
  writeFileSync(canary, 'untouched\n');
  const ran = join(dir, 'ran');
  const script = join(dir, 'evil.sh');
  writeFileSync(script, `#!/bin/sh\nenv > ${ran}\nid >> ${ran}\n`);
  chmodSync(script, 0o755);
  return { dir, canary, ran, script };
}

/** A shell probe that prints `label=yes` when the command succeeds, `label=no` otherwise. */
export function probe(label: string, command: string): string {
  return `if ${command} >/dev/null 2>&1; then echo ${label}=yes; else echo ${label}=no; fi`;
}

/** What `traceProbes` tries: each must report `no` where svc's seccomp profile applies. */
export const TRACE_ATTEMPTS = [
  'ptrace_init',
  'ptrace_child',
  'ptrace_traceme',
  'process_vm_readv',
  'process_vm_writev',
  'pidfd_getfd',
];

/**
 * Shell probes of one process reading or steering another: ptrace of PID 1 (the engine's init, a
 * pod's harness) and of a child, another's memory, another's file descriptors. x86_64 syscall
 * numbers, through perl (the image has no debugger). PTRACE_SEIZE does not stop its target: where
 * it is allowed, the probe leaves PID 1 running.
 */
export function traceProbes(): string[] {
  const syscall = (...args: (number | string)[]) => `perl -e 'exit(syscall(${args.join(', ')}) == 0 ? 0 : 1)'`;
  const [PTRACE, PTRACE_SEIZE, PTRACE_TRACEME] = [101, 0x4206, 0];
  return [
    'sleep 60 & child=$!',
    probe('ptrace_init', syscall(PTRACE, PTRACE_SEIZE, 1, 0, 0)),
    probe('ptrace_child', syscall(PTRACE, PTRACE_SEIZE, "'$child'", 0, 0)),
    probe('ptrace_traceme', syscall(PTRACE, PTRACE_TRACEME, 0, 0, 0)),
    // No iovec: the call answers 0 at once when allowed, EPERM when the profile refuses it.
    probe('process_vm_readv', syscall(310, 1, 0, 0, 0, 0, 0)),
    probe('process_vm_writev', syscall(311, 1, 0, 0, 0, 0, 0)),
    // A bad pidfd: EBADF when allowed, EPERM when refused.
    probe('pidfd_getfd', `perl -e 'syscall(438, -1, 0, 0); exit($!{EPERM} ? 1 : 0)'`),
    'kill $child',
  ];
}
