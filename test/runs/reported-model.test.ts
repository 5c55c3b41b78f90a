// A run's model is the one its agent says it ran, else the one asked for; never the provider
// (an agent with a provider and no model used to read as "Model: anthropic").
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: reporter',
    '    provider: anthropic',
    `    command: ["bash", "-c", "echo ` +
      `'{\\"type\\":\\"svc.usage\\",\\"costUsd\\":0.01,\\"model\\":\\"local-llama-3.1\\"}'"]`,
    '  - name: asked',
    '    provider: anthropic',
    '    model: small-model',
    '    command: ["bash", "-c", "echo working"]',
    '  - name: unnamed',
    '    provider: anthropic',
    '    command: ["bash", "-c", "echo working"]',
  ].join('\n'),
);

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: the model the agent reports, else the one asked for, never the provider`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({ database: leg, env: { SVC_AGENTS_FILE: agentsFile } });
    t.teardown(() => svc.stop());
    const dispatch = async (agent: string, body: Record<string, unknown> = {}) => {
      const response = await svc.request('POST', '/runs', { body: { agent, prompt: 'go', ...body } });
      t.is(response.status, 201, JSON.stringify(response.body));
      return response.body.run.id as string;
    };
    const [reporter, overridden, asked, unnamed] = await Promise.all([
      dispatch('reporter'),
      dispatch('reporter', { modelOverride: 'asked-for-model' }),
      dispatch('asked'),
      dispatch('unnamed'),
    ]);
    const ended = async (id: string) => {
      const run = await waitForRunState(svc, id);
      t.is(run.state, 'succeeded', JSON.stringify(run));
      return run;
    };
    t.like(await ended(reporter), { provider: 'anthropic', model: 'local-llama-3.1' });
    // What the agent ran outweighs what it was asked to run.
    t.like(await ended(overridden), { model: 'local-llama-3.1' });
    t.like(await ended(asked), { model: 'small-model' });
    t.like(await ended(unnamed), { provider: 'anthropic', model: null });
    // The list reads the same rows.
    const listed = (await svc.request('GET', '/runs?limit=10')).body.runs as { id: string; model: string | null }[];
    t.is(listed.find((run) => run.id === reporter)?.model, 'local-llama-3.1');
  });
}
