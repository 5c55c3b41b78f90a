// A run's steering inbox, as its workflow holds it. Pure: the ordering of claims and the way
// messages are folded into a prompt for agents that only take input at spawn.
import type { InboxPriority, InboxState } from './run-states.ts';

export interface InboxItem {
  id: string;
  body: string;
  priority: InboxPriority;
  fromActor: string;
  createdAt: string;
  /** The run's message counter: FIFO order within a priority. */
  seq: number;
  state: InboxState;
  deliveredAt: string | null;
  deliveredRunId: string | null;
}

export type NewInboxItem = Pick<InboxItem, 'id' | 'body' | 'priority' | 'fromActor' | 'createdAt'>;

const RANK: Record<InboxPriority, number> = { urgent: 0, high: 1, normal: 2, low: 3 };

/** Messages in claim order: highest priority first, then oldest. */
export function inClaimOrder(items: readonly InboxItem[]): InboxItem[] {
  return [...items].sort((a, b) => RANK[a.priority] - RANK[b.priority] || a.seq - b.seq);
}

/** Unread messages in claim order. */
export function unreadInClaimOrder(inbox: readonly InboxItem[]): InboxItem[] {
  return inClaimOrder(inbox.filter((item) => item.state === 'unread'));
}

/** Marks every unread message delivered (at most once: a delivered message never comes back). */
export function claimAll(inbox: InboxItem[], runId: string, at: string): InboxItem[] {
  const claimed = unreadInClaimOrder(inbox);
  for (const item of claimed) {
    item.state = 'delivered';
    item.deliveredAt = at;
    item.deliveredRunId = runId;
  }
  return claimed.map((item) => ({ ...item }));
}

/** For spawn-only agents: the messages that arrived before the agent started, after the prompt. */
export function foldIntoPrompt(prompt: string, messages: readonly InboxItem[]): string {
  if (messages.length === 0) return prompt;
  const lines = messages.map((message) => `- [${message.priority}] ${message.fromActor}: ${message.body}`);
  return `${prompt}\n\nSteering messages received before you started (most important first):\n${lines.join('\n')}\n`;
}

/** The wire form of a message (GET /runs/{id}/inbox in docs/openapi.json): runId is set once delivered. */
export function presentInboxItem(item: InboxItem) {
  return {
    id: item.id,
    runId: item.deliveredRunId,
    body: item.body,
    priority: item.priority,
    fromActor: item.fromActor,
    state: item.state,
    createdAt: item.createdAt,
    deliveredAt: item.deliveredAt,
  };
}
