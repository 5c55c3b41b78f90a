// The API's JSON body reader on its own: a whole body parses, and a request whose client went away
// before or while its body came rejects instead of leaving its handler waiting forever.
import test from 'ava';
import { PassThrough } from 'node:stream';
import { readJsonBody } from '../../api/middleware/json-body.ts';

/** What readJsonBody reads of Koa's context: the request's type, the raw request and response. */
function contextOf(request: PassThrough) {
  return { request: { type: 'application/json', length: 0 }, req: request, res: {} } as never;
}

test('a whole body is parsed', async (t) => {
  const request = new PassThrough();
  const read = readJsonBody(contextOf(request), 1024, true);
  request.end('{"agent":"shell","prompt":"x"}');
  t.deepEqual(await read, { agent: 'shell', prompt: 'x' });
});

test('a request destroyed before its body is read rejects at once', async (t) => {
  const request = new PassThrough();
  request.write('{"agent":');
  request.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  const error = await t.throwsAsync(readJsonBody(contextOf(request), 1024, true));
  t.is((error as { code?: string }).code, 'ERR_STREAM_PREMATURE_CLOSE');
});

test('a request closed while its body comes rejects', async (t) => {
  const request = new PassThrough();
  const read = readJsonBody(contextOf(request), 1024, true);
  request.write('{"agent":');
  setImmediate(() => request.destroy());
  const error = await t.throwsAsync(read);
  t.is((error as { code?: string }).code, 'ERR_STREAM_PREMATURE_CLOSE');
});
