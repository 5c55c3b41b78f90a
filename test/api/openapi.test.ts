// The OpenAPI document: served, complete (every route the router mounts is in it, with its
// method), and the committed docs/openapi.json is the generated one.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { apiRouter } from '../../api/app.ts';
import { buildOpenApiDocument } from '../../api/openapi.ts';
import { documentedRoutes } from '../../api/server.ts';
import { SVC_VERSION } from '../../platform/version.ts';
import { startTestStack } from '../support/stack.ts';

const document = buildOpenApiDocument(documentedRoutes(SVC_VERSION), SVC_VERSION);

test('every route the API router mounts is in the document, with its method', (t) => {
  const router = apiRouter({
    routes: documentedRoutes(SVC_VERSION),
    auth: { operatorToken: 'x', noAuth: false, isRunActive: async () => true },
  });
  const mounted = router.stack.flatMap((layer) =>
    layer.methods
      .filter((method) => method !== 'HEAD')
      .map((method) => `${method.toLowerCase()} ${String(layer.path).replace(/:([A-Za-z]+)/g, '{$1}')}`),
  );
  t.true(mounted.length > 30, 'the real route table');
  const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method} ${path}`),
  );
  t.deepEqual(
    mounted.filter((route) => !documented.includes(route)),
    [],
    'routes missing from the document',
  );
  t.deepEqual(
    documented.filter((route) => !mounted.includes(route)),
    [],
    'documented routes nobody serves',
  );
});

test('every operation documents its auth, its error envelope, and its 400 when it takes input', (t) => {
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations) as [string, any][]) {
      const name = `${method} ${path}`;
      t.truthy(operation.responses.default, name);
      t.true(Array.isArray(operation.security), name);
      if (operation.parameters?.length || operation.requestBody) t.truthy(operation.responses['400'], name);
      if (operation.security.length) t.truthy(operation.responses['401'], name);
    }
  }
  t.is(document.openapi, '3.1.0');
});

test('docs/openapi.json is the generated document (run `npm run openapi` after changing a route)', (t) => {
  t.deepEqual(JSON.parse(readFileSync('docs/openapi.json', 'utf8')), JSON.parse(JSON.stringify(document)));
});

test('GET /openapi.json serves it without a credential', async (t) => {
  const svc = await startTestStack({ worker: false });
  t.teardown(() => svc.stop());
  const response = await svc.request('GET', '/openapi.json', { token: null });
  t.is(response.status, 200);
  t.deepEqual(response.body, JSON.parse(JSON.stringify(document)));
});
