// What svc's programs in a sandbox share with each other and with svc's side of the wire: joining
// two connections, a pod's transfer frames, the mark of a pod's stderr lines. node: imports only,
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
