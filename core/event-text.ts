// Every run event as one human line, for whoever shows a run's log to a person: the dashboard,
// the CLI, GET /runs/{id}/log. One rendering per kind of core/event-kinds.ts (a kind without one
// fails the type-check), plus agents' own `agent.*` lines and anything unknown. Agent output is
// returned as its text: escaping it for a terminal or a page is the caller's job.
import type { RUN_EVENT_KINDS } from './event-kinds.ts';
import {
  asPayload,
  clip,
  colon,
  compact,
  num,
  parens,
  plural,
  prName,
  str,
  toolInput,
  toolResultText,
  usd,
  words,
  type Payload,
} from './event-text-format.ts';

/** How a line reads: svc's news, something to notice, a failure, or the agent's own output. */
export type EventTone = 'info' | 'warn' | 'error' | 'output';

export interface EventText {
  text: string;
  tone: EventTone;
}

/** What a rendering needs of a run event (GET /runs/{id}/events' line has these, and more). */
export interface RenderableEvent {
  kind: string;
  stream?: string | null;
  payload?: unknown;
}

type SvcKind = (typeof RUN_EVENT_KINDS)[number];

const info = (text: string): EventText => ({ text, tone: 'info' });
const warn = (text: string): EventText => ({ text, tone: 'warn' });
const error = (text: string): EventText => ({ text, tone: 'error' });
/** Agent output: its text as written, unclipped (it is the log's substance). */
const output = (value: unknown): EventText => ({ text: typeof value === 'string' ? value : '', tone: 'output' });

const money = (payload: Payload, key: string) => {
  const value = num(payload, key);
  return value === null ? null : usd(value);
};
const commits = (payload: Payload) => {
  const count = num(payload, 'commitsAhead');
  return count === null ? null : plural(count, 'commit');
};
const minutes = (ms: number | null) => (ms === null ? null : plural(Math.round(ms / 60_000), 'minute'));
const step = (payload: Payload, key = 'seq') => {
  const seq = num(payload, key);
  return seq === null ? 'a step' : `step ${seq}`;
};
const tokens = (payload: Payload) => {
  const input = num(payload, 'tokensInput');
  const outputTokens = num(payload, 'tokensOutput');
  const cached = num(payload, 'tokensCacheRead');
  return [
    input !== null && `${input.toLocaleString('en-US')} tokens in`,
    outputTokens !== null && `${outputTokens.toLocaleString('en-US')} out`,
    cached !== null && cached > 0 && `${cached.toLocaleString('en-US')} cached`,
  ];
};

/** The paths a run left uncommitted, the first few by name: what to commit, or to ignore. */
function uncommitted(payload: Payload): string | null {
  const paths = Array.isArray(payload.dirtyPaths) ? payload.dirtyPaths.filter((path) => typeof path === 'string') : [];
  if (!paths.length) return null;
  const named = paths.slice(0, 3).map((path) => clip(path, 60));
  return `uncommitted ${named.join(', ')}${paths.length > 3 ? ` and ${paths.length - 3} more` : ''}`;
}

/** The run's state changes: queued, running, the terminal envelope, or a runtime's turn result. */
function stateChange(payload: Payload): EventText {
  const state = str(payload, 'state');
  if (payload.type !== 'result') return info(state === 'running' ? 'Agent running' : `Run ${state ?? 'changed'}`);
  if (state === null) {
    // A runtime's own end of a turn (Claude Code's result envelope, Codex's turn.completed).
    const usage = asPayload(payload.usage);
    const turn = [
      str(payload, 'subtype'),
      num(payload, 'numTurns') !== null && plural(num(payload, 'numTurns')!, 'turn'),
      money(payload, 'costUsd'),
      num(usage, 'input_tokens') !== null && `${num(usage, 'input_tokens')!.toLocaleString('en-US')} tokens in`,
      num(usage, 'output_tokens') !== null && `${num(usage, 'output_tokens')!.toLocaleString('en-US')} out`,
    ];
    return payload.isError === true
      ? warn(`Agent turn ended in an error${parens(...turn)}`)
      : info(`Agent turn ended${parens(...turn)}`);
  }
  const why = words(str(payload, 'failureReason')) ?? words(str(payload, 'reason'));
  // What the failure says of itself (an invalid file's problem, a service's), when it says anything.
  const text =
    `Run ${state}${parens(why, num(payload, 'exitCode') !== null && `exit ${num(payload, 'exitCode')}`)}` +
    colon(str(payload, 'message'));
  return state === 'failed' ? error(text) : state === 'cancelled' ? warn(text) : info(text);
}

function sandboxStarted(payload: Payload): EventText {
  const egress = Array.isArray(payload.egress) ? plural(payload.egress.length, 'egress rule') : null;
  const memory = asPayload(payload.memory);
  const limit = num(memory, 'limitMiB');
  const text = `Sandbox started${parens(
    str(payload, 'isolation'),
    str(payload, 'image'),
    egress,
    limit !== null && `${limit} MiB${memory.enforced === false ? ' not enforced' : ''}`,
  )}`;
  return str(payload, 'warning') ? warn(`${text}: ${str(payload, 'warning')}`) : info(text);
}

const RENDERINGS: Record<SvcKind, (payload: Payload) => EventText> = {
  'log.stdout': (p) => output(p.text),
  'log.stderr': (p) => output(p.text),
  state_change: stateChange,
  assistant: (p) => output(p.text),
  tool_use: (p) => {
    const exit = num(p, 'exitCode');
    const text = `Tool ${str(p, 'name') ?? 'call'}${colon(str(p, 'command') ?? toolInput(p.input))}`;
    return exit !== null && exit !== 0 ? warn(`${text} (exit ${exit})`) : info(text);
  },
  tool_result: (p) => {
    const result = toolResultText(p.content ?? p.output);
    return result.isError ? warn(`Tool error${colon(result.text)}`) : info(`Tool result${colon(result.text)}`);
  },
  usage: (p) => info(`Usage${parens(money(p, 'costUsd'), ...tokens(p))}`),
  'sandbox.started': sandboxStarted,
  'sandbox.oom_kill': (p) =>
    error(
      `Out of memory: the kernel killed a process of the run${parens(
        num(p, 'agentExitCode') !== null && `agent exit ${num(p, 'agentExitCode')}`,
        str(p, 'agentSignal'),
      )}`,
    ),
  'sandbox.egress_refused': (p) =>
    warn(
      `Egress refused: ${str(p, 'destination') ?? 'a destination'}` +
        parens(str(p, 'protocol'), words(str(p, 'reason'))),
    ),
  'output.truncated': (p) =>
    warn(
      `Output truncated: the run's output reached its cap${parens(
        num(p, 'limitBytes') !== null && `${Math.round(num(p, 'limitBytes')! / 1048576)} MiB`,
      )}; later lines are not kept`,
    ),
  'environment.building': (p) => info(`Setting up the environment${parens(str(p, 'key')?.slice(0, 12))}`),
  'environment.log': (p) => output(p.text),
  'environment.ready': (p) => {
    const ms = num(p, 'durationMs');
    const took = ms !== null && `${(ms / 1000).toFixed(1)} s`;
    const why = str(p, 'uncached');
    return info(
      `Environment ready${parens(p.cached === true ? 'cached' : 'set up', took, why && `not cached: ${why}`)}`,
    );
  },
  'environment.service_ready': (p) => {
    const ms = num(p, 'durationMs');
    return info(`Service ${str(p, 'name') ?? '?'} ready${parens(ms !== null && `${(ms / 1000).toFixed(1)} s`)}`);
  },
  'admission.waiting': (p) => info(`Waiting for a slot${colon(str(p, 'reason'))}`),
  'admission.granted': () => info('Slot granted'),
  'steer.sent': (p) =>
    info(
      `Steering message queued${parens(
        str(p, 'priority') && str(p, 'priority') !== 'normal' && `${str(p, 'priority')} priority`,
        str(p, 'fromActor') && `from ${str(p, 'fromActor')}`,
      )}`,
    ),
  'steer.delivered': () => info('Steering message delivered'),
  'cancel.requested': (p) =>
    warn(`Cancel requested by ${str(p, 'requestedBy') ?? 'an operator'}${colon(str(p, 'reason'))}`),
  'cost.cap_exceeded': (p) =>
    error(`Cost cap exceeded (${money(p, 'costUsd') ?? '?'} of ${money(p, 'maxCostUsd') ?? '?'}): agent stopped`),
  'workspace.too_large': (p) => {
    const entries = num(p, 'maxEntries');
    const size = num(p, 'sizeMiB');
    return error(
      entries !== null
        ? `Workspace too large (more than ${entries.toLocaleString('en-US')} files): agent stopped`
        : `Workspace too large (${size === null ? '?' : `${size} MiB or more`} of ` +
            `${num(p, 'maxMiB') ?? '?'} MiB): agent stopped`,
    );
  },
  'run.paused': (p) =>
    warn(
      `Paused at the cost cap (${money(p, 'costUsd') ?? '?'} of ${money(p, 'maxCostUsd') ?? '?'}): ` +
        'raise the cap or cancel',
    ),
  'run.resumed': (p) =>
    info(
      `Resumed with a cap of ${money(p, 'maxCostUsd') ?? '?'}` +
        `${parens(num(p, 'generation') !== null && `generation ${num(p, 'generation')}`)}`,
    ),
  'duration.exceeded': (p) => {
    const limit = num(p, 'limitMinutes') ?? num(p, 'maxDurationMinutes');
    return error(`Stopped: past its time limit${parens(limit !== null && plural(limit, 'minute'))}`);
  },
  'watchdog.silence_exceeded': (p) => error(`Stopped: silent too long${parens(minutes(num(p, 'silenceTimeoutMs')))}`),
  'finalize.intent_parked': (p) =>
    info(
      `Finalizing: asked the sandbox to hand over ${str(p, 'branch') ?? 'its work'}` +
        `${parens(str(p, 'baseBranch') && `onto ${str(p, 'baseBranch')}`)}`,
    ),
  'finalize.result': (p) => {
    const unposted = str(p, 'unposted');
    if (unposted) return warn(`Finalize result not posted (${words(unposted)})`);
    const dirty =
      Array.isArray(p.dirtyPaths) && p.dirtyPaths.length ? plural(p.dirtyPaths.length, 'uncommitted path') : null;
    return info(`Finalize result${parens(commits(p) && `${commits(p)} ahead`, p.pushed === true && 'pushed', dirty)}`);
  },
  // A run that changed nothing has nothing to push, as it should; a dropped commit is news.
  'reap.empty_push': (p) =>
    (p.droppedCommit === true ? warn : info)(
      'Nothing to push' +
        parens(p.droppedCommit === true && 'the commit was dropped', p.noChanges === true && 'no changes') +
        colon(uncommitted(p)),
    ),
  branch_pushed: (p) => info(`Pushed ${str(p, 'branch') ?? 'the branch'}${parens(commits(p))}`),
  'reap.pr_opened': (p) =>
    info(`${prName(p.prUrl)} opened${parens(str(p, 'baseBranch') && `onto ${str(p, 'baseBranch')}`)}`),
  'reap.pr_open_failed': (p) => error(`PR not opened${colon(str(p, 'message'))}`),
  'reap.pr_open_skipped': (p) => warn(`PR not opened${colon(str(p, 'reason'))}`),
  'reap.workspace_salvaged': (p) => warn(`Workspace salvaged${colon(str(p, 'salvageRef') ?? str(p, 'salvagePath'))}`),
  'reap.workspace_salvage_failed': (p) =>
    error(`Workspace salvage failed${colon(Array.isArray(p.notes) ? compact(p.notes.join('; ')) : null)}`),
  'reap.workspace_salvage_recorded': (p) =>
    warn(
      `Workspace salvage recorded${parens(str(p, 'source'), str(p, 'trigger'))}` +
        colon(str(p, 'salvageRef') ?? str(p, 'salvagePath')),
    ),
  'pr.follow_started': (p) => info(`The PR is followed by workflow ${str(p, 'workflowId') ?? '?'}`),
  'pr.state_changed': (p) => info(`${prName(p.prUrl)} ${words(str(p, 'prState')) ?? 'changed'}`),
  'pr_loop.follow_up_started': (p) =>
    info(`PR loop round ${num(p, 'round') ?? '?'}${parens(words(str(p, 'kind')))} started${colon(str(p, 'runId'))}`),
  'pr_loop.follow_up_ended': (p) => {
    const state = str(p, 'state') ?? 'ended';
    const text = `PR loop round ${num(p, 'round') ?? '?'}${parens(words(str(p, 'kind')))} ${state}${parens(
      words(str(p, 'failureReason')),
      money(p, 'prCostUsd') && `PR total ${money(p, 'prCostUsd')}`,
    )}`;
    return state === 'succeeded' ? info(text) : warn(text);
  },
  'pr_loop.merge_requested': (p) => info(`Merged the PR${parens(str(p, 'sha')?.slice(0, 12), str(p, 'method'))}`),
  'pr_loop.merge_refused': (p) => warn(`Merge refused${parens(str(p, 'sha')?.slice(0, 12))}${colon(str(p, 'reason'))}`),
  'pr_loop.commented': (p) =>
    p.posted === false
      ? warn(`Could not comment on the PR${colon(str(p, 'body'))}`)
      : info(`Commented on the PR${colon(str(p, 'body'))}`),
  'pr_loop.stopped': () => warn('PR loop stopped by an operator: the PR is followed, no longer answered'),
  'preview.starting': (p) =>
    info(`Preview starting${parens(num(p, 'port') !== null && `port ${num(p, 'port')}`, str(p, 'command'))}`),
  'preview.made_room': (p) =>
    info(
      `Made room for the preview: tore down ` +
        `${Array.isArray(p.evicted) ? plural(p.evicted.length, 'preview') : 'previews'}` +
        parens(Array.isArray(p.evicted) && compact(p.evicted.join(', '))),
    ),
  'preview.live': (p) => info(`Preview live${parens(num(p, 'port') !== null && `port ${num(p, 'port')}`)}`),
  'preview.failed': (p) => error(`Preview failed${colon(str(p, 'message'))}`),
  'preview.torn_down': (p) =>
    info(`Preview torn down${parens(words(str(p, 'reason')), str(p, 'actor') && `by ${str(p, 'actor')}`)}`),
  'run.internal_failure': (p) =>
    error(
      `Internal failure${parens(str(p, 'phase') && `phase ${str(p, 'phase')}`, str(p, 'activity'))}` +
        colon(str(p, 'message')),
    ),
  'run.reconciled': (p) =>
    warn(`Reconciled from its closed workflow: ${str(p, 'state') ?? 'ended'}${parens(words(str(p, 'failureReason')))}`),
  'plan_run.dispatched': (p) =>
    info(
      `Plan ${step(p)} dispatched${parens(str(p, 'seedId') && `seed ${str(p, 'seedId')}`)}${colon(str(p, 'runId'))}`,
    ),
  'plan_run.advanced': (p) =>
    info(`Plan advanced past ${step(p, 'mergedChildSeq')} to ${step(p, 'dispatchedChildSeq')}`),
  'plan_run.waiting_for_merge': (p) => info(`Plan ${step(p)} waits for ${prName(p.prUrl)} to merge`),
  'plan_run.merged': (p) =>
    info(
      p.trivial === true
        ? `Plan ${step(p, 'mergedChildSeq')} merged (nothing to push)`
        : `Plan ${step(p, 'mergedChildSeq')}: ${prName(p.prUrl)} merged`,
    ),
  'plan_run.skipped': (p) =>
    info(`Plan ${step(p)} skipped${parens(str(p, 'seedId') && `seed ${str(p, 'seedId')} is closed`)}`),
  'plan_run.child_retried': (p) =>
    warn(
      `Plan step retried after ${words(str(p, 'failureReason')) ?? 'a failure'}` +
        parens(
          str(p, 'previousRunId') && `was ${str(p, 'previousRunId')}`,
          num(p, 'retryCount') !== null && `retry ${num(p, 'retryCount')}`,
        ),
    ),
  'plan_run.failed': (p) => error(`Plan-run failed at ${step(p, 'failedSeq')}${colon(words(str(p, 'reason')))}`),
  'plan_run.succeeded': (p) =>
    info(`Plan-run succeeded${parens(num(p, 'children') !== null && plural(num(p, 'children')!, 'step'))}`),
  'plan_run.cancelled': (p) =>
    warn(`Plan-run cancelled by ${str(p, 'requestedBy') ?? 'an operator'}${colon(str(p, 'reason'))}`),
  'plan_run.cancel_child_failed': (p) =>
    error(`Could not cancel plan ${step(p)}${parens(str(p, 'runId'))}${colon(str(p, 'message'))}`),
  'plan_run.resumed': (p) =>
    info(
      `Plan-run resumed${parens(words(str(p, 'reason')) && `after ${words(str(p, 'reason'))}`)}` +
        colon(str(p, 'note')),
    ),
  'plan_run.internal_failure': (p) => error(`Plan-run internal failure${colon(str(p, 'message'))}`),
};

/** Agents' own lines (`agent.<type>`): the ones runtimes are known to write, else the type and payload. */
function agentLine(type: string, payload: Payload, raw: unknown): EventText {
  switch (type) {
    case 'user_message':
      return info(`Input to the agent${colon(str(payload, 'text'))}`);
    case 'reasoning':
      return output(payload.text);
    case 'provider_error':
    case 'turn_failed':
      return error(`Model provider error${colon(str(payload, 'message'))}`);
    // An ACP agent's structured lines (activities/runtimes/acp.ts).
    case 'message':
    case 'thought':
      return output(payload.text);
    case 'tool_call':
      return info(
        `Tool call${colon(str(payload, 'title') ?? str(payload, 'id'))}` +
          parens(str(payload, 'kind'), str(payload, 'status')),
      );
    case 'file_edit':
      return info(
        `${payload.created === true ? 'Created' : 'Edited'}${colon(str(payload, 'path'))}` +
          parens(`+${num(payload, 'added') ?? 0} −${num(payload, 'removed') ?? 0}`),
      );
    case 'plan': {
      const entries = Array.isArray(payload.entries) ? payload.entries.map(asPayload) : [];
      const done = entries.filter((entry) => str(entry, 'status') === 'completed').length;
      const current = entries.find((entry) => str(entry, 'status') === 'in_progress');
      return info(
        `Plan: ${done} of ${plural(entries.length, 'step')} done${colon(current && str(current, 'content'))}`,
      );
    }
    case 'permission':
      return str(payload, 'decision') === 'allowed'
        ? info(`Permission allowed${colon(str(payload, 'title'))}`)
        : warn(`Permission refused${colon(str(payload, 'title'))}${parens(str(payload, 'reason'))}`);
    case 'turn_ended':
      return info(`Agent turn ended${parens(str(payload, 'stopReason')?.replaceAll('_', ' '))}`);
    case 'steer_taken':
      return info(`Steering message taken as the next turn${parens(str(payload, 'priority'))}`);
    case 'session': {
      const agentInfo = asPayload(payload.agent);
      return info(`Agent session started${parens(str(agentInfo, 'name'), str(agentInfo, 'version'))}`);
    }
    case 'system.init':
      return info(
        'Agent session started' +
          parens(str(payload, 'model'), num(payload, 'tools') !== null && plural(num(payload, 'tools')!, 'tool')),
      );
    default:
      return info(`${clip(type, 80)}${raw === null || raw === undefined ? '' : `: ${compact(raw)}`}`);
  }
}

const isSvcKind = (kind: string): kind is SvcKind => Object.hasOwn(RENDERINGS, kind);

/** One run event as one human line (agent output: its text as written, with tone `output`). */
export function describeRunEvent(event: RenderableEvent): EventText {
  const payload = asPayload(event.payload);
  if (isSvcKind(event.kind)) {
    const line = RENDERINGS[event.kind](payload);
    // A line may start with a fallback ("the PR opened"): it reads as a sentence all the same.
    return line.tone === 'output' ? line : { ...line, text: line.text.charAt(0).toUpperCase() + line.text.slice(1) };
  }
  if (event.kind.startsWith('agent.')) return agentLine(event.kind.slice('agent.'.length), payload, event.payload);
  const raw = event.payload === null || event.payload === undefined ? '' : `: ${compact(event.payload)}`;
  return info(`${clip(event.kind, 80) || 'event'}${raw}`);
}
