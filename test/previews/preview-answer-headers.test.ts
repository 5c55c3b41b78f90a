// What of a preview's answer reaches the browser, header by header, in both modes: its cookies kept to
// its own scope, svc's names and nameless cookies dropped, Clear-Site-Data and Service-Worker-Allowed
// never passed on (the proxy end to end: test/previews/previews.test.ts).
import test from 'ava';
import { answerHeaders, scopedCookie, upgradeAnswerHead } from '../../api/preview/preview-answer-headers.ts';

const PREFIX = '/p/run_abcdefghijkl';

test("path mode: a cookie goes under the preview's prefix and loses its Domain", (t) => {
  t.is(scopedCookie('a=1', PREFIX), `a=1; Path=${PREFIX}`);
  t.is(scopedCookie('a=1; Path=/', PREFIX), `a=1; Path=${PREFIX}`);
  t.is(scopedCookie('a=1; path=/api; Secure', PREFIX), `a=1; Secure; Path=${PREFIX}/api`);
  t.is(scopedCookie('a=1; Domain=example.com; HttpOnly', PREFIX), `a=1; HttpOnly; Path=${PREFIX}`);
  t.is(scopedCookie('a=1; Path=relative; Max-Age=60', PREFIX), `a=1; Max-Age=60; Path=${PREFIX}`);
  // Two Path attributes: the last one counts, as in a browser, and it is still put under the prefix.
  t.is(scopedCookie('a=1; Path=/x; Path=/y', PREFIX), `a=1; Path=${PREFIX}/y`);
});

test('subdomain mode: the path stays, the Domain goes (the cookie stays on the preview host)', (t) => {
  t.is(scopedCookie('a=1; Domain=.svc.example; Path=/app', null), 'a=1; Path=/app');
  t.is(scopedCookie('a=1', null), 'a=1; Path=/');
});

test("svc's names and nameless cookies are dropped", (t) => {
  for (const line of ['svc_preview_run_x=forged; Path=/', 'SVC_PREVIEW=1', '=x=1', 'novalue', ''])
    t.is(scopedCookie(line, PREFIX), null, line);
});

test('Clear-Site-Data and Service-Worker-Allowed never pass; other headers do', (t) => {
  const headers = answerHeaders(
    {
      'content-type': 'text/html',
      'clear-site-data': '"*"',
      'service-worker-allowed': '/',
      'set-cookie': ['a=1; Path=/', 'svc_preview=x'],
    },
    PREFIX,
  );
  t.deepEqual(headers, { 'content-type': 'text/html', 'set-cookie': [`a=1; Path=${PREFIX}`] });
  t.deepEqual(answerHeaders({ 'clear-site-data': '"cookies"', 'set-cookie': ['=x'] }, null), {});
});

test("a WebSocket handshake's answer is filtered the same way", (t) => {
  const head = [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Set-Cookie: ws=1; Domain=evil.example; Path=/',
    'Clear-Site-Data: "*"',
    'set-cookie: svc_preview_run_x=1',
  ].join('\r\n');
  t.is(
    upgradeAnswerHead(head, PREFIX),
    ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', `set-cookie: ws=1; Path=${PREFIX}`].join('\r\n'),
  );
});
