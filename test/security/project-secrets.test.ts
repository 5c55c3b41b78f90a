// Project secrets at rest and across processes: a sealed value opens only in its own row and only
// with its key; a process holding another key refuses to start rather than fail runs later; a
// rotation re-seals every row; the key file is svc's alone. Both read models.
import test from 'ava';
import { mkdtempSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProjectSecretEntity } from '../../db/entities/index.ts';
import { ProjectSecretsRepository } from '../../db/repositories/project-secrets.repository.ts';
import { ConfigurationError } from '../../platform/config-error.ts';
import { loadConfig } from '../../platform/config.ts';
import { loadSecretsKeys, SecretsKey, type SecretsKeys } from '../../platform/secrets-key.ts';
import { openProjectSecrets } from '../../stack/project-secrets.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { withReadModel } from '../support/read-model-fixture.ts';

const keysOf = (current: SecretsKey, previous: SecretsKey | null = null): SecretsKeys => ({
  current,
  previous,
  source: 'environment',
  path: null,
});

test('a sealed value opens only with its key, in its own row, unaltered', (t) => {
  const key = SecretsKey.generate();
  const sealed = key.seal('registry-token-123', 'project-secret:prj_a/NPM_TOKEN');
  t.false(sealed.includes('registry-token-123'));
  t.not(sealed, key.seal('registry-token-123', 'project-secret:prj_a/NPM_TOKEN'), 'a fresh nonce each time');
  t.is(key.open(sealed, 'project-secret:prj_a/NPM_TOKEN'), 'registry-token-123');
  t.throws(() => key.open(sealed, 'project-secret:prj_b/NPM_TOKEN'), undefined, 'moved to another project');
  t.throws(() => key.open(sealed, 'project-secret:prj_a/OTHER'), undefined, 'moved to another name');
  t.throws(() => SecretsKey.generate().open(sealed, 'project-secret:prj_a/NPM_TOKEN'), undefined, 'another key');
  const raw = Buffer.from(sealed.slice(3), 'base64');
  raw[raw.length - 1]! ^= 1;
  t.throws(() => key.open(`v1:${raw.toString('base64')}`, 'project-secret:prj_a/NPM_TOKEN'), undefined, 'altered');
});

test('the key file is made once, 0600, and a bad SVC_SECRETS_KEY is a configuration error', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-key-'));
  const path = join(dir, 'secrets-key');
  const first = loadSecretsKeys({ key: undefined, previous: undefined }, path);
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is(loadSecretsKeys({ key: undefined, previous: undefined }, path).current.id, first.current.id);
  t.is(readFileSync(path, 'utf8').trim(), first.current.toBase64());
  const given = SecretsKey.generate().toBase64();
  t.is(loadSecretsKeys({ key: given, previous: undefined }, path).source, 'environment');
  for (const SVC_SECRETS_KEY of ['short', Buffer.alloc(16).toString('base64'), `${given}!`])
    t.throws(() => loadConfig({ SVC_SECRETS_KEY }), { instanceOf: ConfigurationError, message: /SVC_SECRETS_KEY/ });
  t.throws(() => loadConfig({ SVC_SECRETS_KEY_PREVIOUS: 'nope' }), { message: /SVC_SECRETS_KEY_PREVIOUS/ });
});

for (const leg of DATABASE_LEGS) {
  test(`${leg}: another key refuses to start; a rotation re-seals every row`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const old = SecretsKey.generate();
      const rows = new ProjectSecretsRepository(readModel, keysOf(old));
      await rows.put('prj_aaaaaaaaaaaa', 'NPM_TOKEN', 'run', 'npm-value-0123456789');
      await rows.put('prj_aaaaaaaaaaaa', 'SETUP_KEY', 'setup', 'setup-value-0123456789');
      await rows.put('prj_bbbbbbbbbbbb', 'OTHER', 'run', 'other-value-0123456789');
      const stored = await readModel.em().find(ProjectSecretEntity, {});
      t.false(JSON.stringify(stored).includes('value-0123456789'), 'no row holds a value');
      t.deepEqual(await rows.environment('prj_aaaaaaaaaaaa', 'run'), { NPM_TOKEN: 'npm-value-0123456789' });
      t.deepEqual(Object.keys(await rows.environment('prj_aaaaaaaaaaaa', 'setup')), ['NPM_TOKEN', 'SETUP_KEY']);

      // A process with a key file of its own (another host) is refused, naming the key it lacks.
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-key-'));
      const stranger = openProjectSecrets(
        { dataDir, secretsKey: { key: undefined, previous: undefined } },
        readModel,
        () => {},
      );
      await t.throwsAsync(stranger, {
        instanceOf: ConfigurationError,
        message: new RegExp(`${old.id}.*SVC_SECRETS_KEY`),
      });

      // Rotation: the new key, the old one as previous; every row re-sealed, values unchanged.
      const fresh = SecretsKey.generate();
      const lines: string[] = [];
      const keys = await openProjectSecrets(
        { dataDir, secretsKey: { key: fresh.toBase64(), previous: old.toBase64() } },
        readModel,
        (line) => lines.push(line),
      );
      t.is(keys.current.id, fresh.id);
      t.deepEqual(lines, [`project secrets: 3 re-sealed with the key ${fresh.id}`]);
      const after = await readModel.em().fork().find(ProjectSecretEntity, {});
      t.deepEqual([...new Set(after.map((row) => row.keyId))], [fresh.id]);
      const rotated = new ProjectSecretsRepository(readModel, keysOf(fresh));
      t.deepEqual(await rotated.environment('prj_bbbbbbbbbbbb', 'run'), { OTHER: 'other-value-0123456789' });
      // The old key alone now opens nothing, and starts nowhere.
      await t.throwsAsync(new ProjectSecretsRepository(readModel, keysOf(old)).values('prj_aaaaaaaaaaaa'));
      await t.throwsAsync(
        openProjectSecrets({ dataDir, secretsKey: { key: old.toBase64(), previous: undefined } }, readModel, () => {}),
        { instanceOf: ConfigurationError },
      );
    });
  });
}
