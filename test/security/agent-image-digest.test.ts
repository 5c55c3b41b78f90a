// The images a project's agentImage and its repository's services (.svc/environment.yaml) may name
// are the operator's SVC_AGENT_IMAGES. A wildcard entry (`repo:*`, `registry/agents/*`) admits tags
// and names under it, never a digest: the engine resolves `name@sha256:…` to whichever image it
// holds with that digest, whatever the name before it, so a digest behind an allowed prefix would
// run any image of the engine's (one the operator never allowed, a private one with its secrets).
import test from 'ava';
import { agentImageRefusal, DEFAULT_AGENT_IMAGE } from '../../platform/sandbox-settings.ts';
import { startContainerEngine, type TestContainerEngine } from '../support/container-engine.ts';

/** An image the engine holds but no entry allows (the agent image's own base). */
const FOREIGN_IMAGE = 'localhost/svc-agent-base:bookworm';
let engine: TestContainerEngine;

test.before(async () => {
  engine = await startContainerEngine();
});
test.after.always(async () => {
  await engine?.stop();
});

const imageId = async (reference: string) =>
  ((await engine.engine.inspectImage(reference)) as { Id?: string } | null)?.Id ?? null;

test('a digest behind an allowed prefix is refused: the engine would run the image it names', async (t) => {
  const foreign = (await engine.engine.inspectImage(FOREIGN_IMAGE)) as { Id: string; RepoDigests?: string[] } | null;
  const digest = foreign?.RepoDigests?.[0]?.split('@')[1];
  t.truthy(digest, `${FOREIGN_IMAGE} has a digest`);
  const repository = DEFAULT_AGENT_IMAGE.replace(/:[^:/]*$/, '');
  const disguised = [`${DEFAULT_AGENT_IMAGE}@${digest!}`, `${repository}@${digest!}`, `localhost/agents/x@${digest!}`];
  // What the engine makes of each: the foreign image, whatever the name says.
  for (const reference of disguised) t.is(await imageId(reference), foreign!.Id, reference);

  const container = { images: [DEFAULT_AGENT_IMAGE, `${repository}:*`, 'localhost/agents/*'] };
  for (const reference of disguised)
    t.is(
      agentImageRefusal(reference, container),
      `agentImage "${reference}" is not one of the images the operator allows (SVC_AGENT_IMAGES)`,
    );
  // A tag or a name under a prefix is still allowed, and a digest the operator named exactly.
  t.is(agentImageRefusal(`${repository}:2`, container), null);
  t.is(agentImageRefusal('localhost/agents/x:1', container), null);
  t.is(agentImageRefusal(`localhost/pinned@${digest!}`, { images: [`localhost/pinned@${digest!}`] }), null);
});
