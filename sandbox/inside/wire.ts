// What svc's programs in a sandbox share with each other and with svc's side of the wire: joining
// two connections, a pod's transfer frames, the mark of a pod's stderr lines, the run's inbox (a
// claim through the run's callback route, which svc answers with the unread messages and marks them
// delivered: the steering relay and the ACP client read it). node: imports only,
// named exports declared in place: programs.ts bundles it into each program that imports it.
import type { Socket } from 'node:net';

/** Joins two connections both ways; either one's end or error ends both. */
export function splice(left: Socket, right: Socket): void {
  left.pipe(right);
  right.pipe(left);
  const close = () => {
    left.destroy();
    right.destroy();
  };
  for (const socket of [left, right]) {
    socket.once('error', close);
    socket.once('close', close);
  }
}

/**
 * How a part moves between a pod and its gateway: the tar stream in frames (a 4-byte length, then
 * at most FRAME_MAX bytes), closed by an empty frame (backends/kubernetes/pod-frames.ts decodes them).
 */
export const FRAME_MAX = 64 * 1024;
/** The empty frame that ends a transfer. */
export const END_FRAME = Buffer.alloc(4);

/** The frames of one chunk. */
export function framed(chunk: Buffer): Buffer {
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < chunk.length; offset += FRAME_MAX) {
    const body = chunk.subarray(offset, offset + FRAME_MAX);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    pieces.push(header, body);
  }
  return Buffer.concat(pieces);
}

/** Marks a stderr line in a pod's log (one stream there): the supervisor files it back as stderr. */
export const STDERR_MARK = '\u001e';

export interface InboxMessage {
  body: string;
  priority: string;
  fromActor: string;
}

/** A claim that hangs is given up (the next one asks again). */
const CLAIM_TIMEOUT_MS = 10_000;

/** Claims the run's unread messages; none when svc cannot be asked (the next claim asks again). */
export async function claimInbox(): Promise<InboxMessage[]> {
  const url = `${process.env.SVC_BASE_URL}/runs/${process.env.SVC_RUN_ID}/inbox`;
  // Only an unsandboxed agent holds the run token; in a sandbox the callback proxy adds it.
  const token = process.env.SVC_API_TOKEN;
  try {
    const response = await fetch(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(CLAIM_TIMEOUT_MS),
    });
    if (!response.ok) return [];
    const { messages } = (await response.json()) as { messages?: InboxMessage[] };
    return Array.isArray(messages) ? messages.filter((message) => typeof message?.body === 'string') : [];
  } catch {
    return [];
  }
}

/** Steering as the agent reads it: who sent it and how urgent, then the text. */
export function steeringText(message: InboxMessage): string {
  return `Steering message from ${message.fromActor} (${message.priority} priority):\n${message.body}`;
}
