// How a part moves between a pod and its gateway: the tar stream in frames (a 4-byte length, then
// at most FRAME_MAX bytes), closed by an empty frame. A connection that ends without that end frame
// is a cut transfer, never a complete one, whatever a tar reading it makes of it. The format is
// inside/wire.ts's, which the harness (sandbox-init.ts) speaks too.
import { Transform, type TransformCallback } from 'node:stream';
import { FRAME_MAX } from '../../inside/wire.ts';

export { END_FRAME, framed } from '../../inside/wire.ts';

/** Frames in, the payload out; it fails when its input ends before the end frame, or runs on after it. */
export class FrameDecoder extends Transform {
  #pending: Buffer = Buffer.alloc(0);
  #complete = false;

  /** Whether the end frame arrived. */
  get complete(): boolean {
    return this.#complete;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.#complete) return done(new Error('data after the end of the transfer'));
    this.#pending = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    while (this.#pending.length >= 4) {
      const length = this.#pending.readUInt32BE(0);
      if (length > FRAME_MAX) return done(new Error(`a frame of ${length} bytes`));
      if (length === 0) {
        this.#complete = true;
        if (this.#pending.length > 4) return done(new Error('data after the end of the transfer'));
        this.#pending = Buffer.alloc(0);
        return done();
      }
      if (this.#pending.length < 4 + length) break;
      this.push(this.#pending.subarray(4, 4 + length));
      this.#pending = this.#pending.subarray(4 + length);
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    done(this.#complete ? null : new Error('the transfer was cut before its end'));
  }
}
