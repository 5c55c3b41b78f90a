// Waiting for a container to end without trusting the engine to say so: the engine's wait is one
// long HTTP request that an engine restart cuts and a hung engine never answers, so the container
// is also inspected on a beat, with a timeout. A container that disappears is `vanished`; an
// engine that answers nothing for `unreachableAfterMs` is `unreachable`.
import { setTimeout as sleep } from 'node:timers/promises';
import type { DockerEngine } from './docker-engine.ts';

/** How often a waiting supervisor asks the engine about its container. */
const BEAT_MS = 5000;
/** How long one of those questions may take. */
const INSPECT_TIMEOUT_MS = 10_000;

export type ContainerEnd = { exitCode: number; loss?: undefined } | { loss: 'vanished' | 'unreachable' };

export async function waitForExit(engine: DockerEngine, id: string, unreachableAfterMs: number): Promise<ContainerEnd> {
  let unansweredSince: number | null = null;
  let waited: Promise<number | null> | null = null;
  for (;;) {
    // One wait at a time; it answers the exit code, or null when it failed (inspect then decides).
    waited ??= engine.wait(id).catch(() => null);
    const answer = await Promise.race([waited, sleep(BEAT_MS).then(() => 'beat' as const)]);
    if (answer !== 'beat') waited = null;
    let state: Awaited<ReturnType<DockerEngine['inspect']>>;
    try {
      state = await engine.inspect(id, INSPECT_TIMEOUT_MS);
    } catch {
      unansweredSince ??= Date.now();
      if (Date.now() - unansweredSince > unreachableAfterMs) return { loss: 'unreachable' };
      if (answer === null) await sleep(1000);
      continue;
    }
    unansweredSince = null;
    if (!state) return { loss: 'vanished' };
    if (!state.State.Running) return { exitCode: typeof answer === 'number' ? answer : state.State.ExitCode };
    // The wait failed while the container runs on (an engine that restarted): ask again shortly.
    if (answer === null) await sleep(1000);
  }
}
