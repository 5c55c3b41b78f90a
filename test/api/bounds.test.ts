// Input bounds: every stored string has a maximum that fits its column on both databases. One
// character more is a 400 naming the field, and nothing starts; the maximum itself is accepted
// and projects (on PostgreSQL too: no run that answers 201 and then never appears).
import test from 'ava';
import { FIELD_LIMITS } from '../../core/field-limits.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const FIELDS = ['providerOverride', 'modelOverride', 'seedId', 'ref', 'targetBranch', 'dispatcherHandle'] as const;

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: a string past its column is 400; at its column it is stored and listed`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({ database: leg });
    t.teardown(() => svc.stop());
    for (const field of FIELDS) {
      const refused = await svc.request('POST', '/runs', {
        body: { agent: 'shell', prompt: 'true', [field]: 'x'.repeat(FIELD_LIMITS.name + 1) },
      });
      t.is(refused.status, 400, field);
      t.regex(refused.body.error.hint, new RegExp(`field "${field}"`));
    }
    t.is((await svc.request('GET', '/runs')).body.total, 0, 'nothing was dispatched');
    const longest = Object.fromEntries(FIELDS.map((field) => [field, 'y'.repeat(FIELD_LIMITS.name)]));
    const accepted = await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'true', trigger: 't'.repeat(FIELD_LIMITS.trigger), ...longest },
    });
    t.is(accepted.status, 201, accepted.text);
    const run = await waitForRunState(svc, accepted.body.run.id);
    t.is(run.seedId, 'y'.repeat(FIELD_LIMITS.name));
    t.is((await svc.request('GET', '/runs')).body.runs.length, 1, 'listed, not a phantom');
  });
}

test('the OpenAPI document states the bounds', async (t) => {
  const { documentedRoutes } = await import('../../api/server.ts');
  const { buildOpenApiDocument } = await import('../../api/openapi.ts');
  const document = buildOpenApiDocument(documentedRoutes('test'), 'test') as any;
  const dispatch = document.paths['/runs'].post.requestBody.content['application/json'].schema;
  const properties = dispatch.properties ?? dispatch.allOf?.[0]?.properties;
  for (const field of FIELDS) {
    const schema = properties[field].anyOf?.[0] ?? properties[field];
    t.is(schema.maxLength, FIELD_LIMITS.name, field);
  }
});

test('a bound holds on the text as sent, before trimming, as the document states it', async (t) => {
  const { cancelRunBody, dispatchRunBody } = await import('../../api/routes/runs.schema.ts');
  const { createPlanRunBody } = await import('../../api/routes/plan-runs.schema.ts');
  const padded = (max: number) => `x${'\t'.repeat(max)}`;
  t.false(cancelRunBody.safeParse({ reason: padded(FIELD_LIMITS.reason) }).success);
  t.true(cancelRunBody.safeParse({ reason: ` ${'r'.repeat(FIELD_LIMITS.reason - 2)} ` }).success);
  t.false(dispatchRunBody.safeParse({ agent: padded(FIELD_LIMITS.name), prompt: 'p' }).success);
  t.false(dispatchRunBody.safeParse({ agent: 'shell', prompt: 'p', trigger: padded(FIELD_LIMITS.trigger) }).success);
  t.false(
    createPlanRunBody.safeParse({ project: 'prj_1', agent: 'shell', issues: [padded(FIELD_LIMITS.name)] }).success,
  );
  t.is(dispatchRunBody.parse({ agent: '  shell ', prompt: 'p' }).agent, 'shell', 'still trimmed');
});
