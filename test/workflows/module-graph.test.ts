// What each workflow instance evaluates anew. In the SDK's reusable V8 context, the modules loaded
// while the bundle boots (the SDK's own) are shared; every module a workflow's code imports is
// evaluated again for each workflow the worker creates or replays, and held while it is cached.
// zod once came in through core/finalize.ts: 838 KB and 6.4 ms per workflow instead of 84 KB and
// 0.5 ms (docs/decisions/0023-toolchain.md). This keeps the per-workflow graph to svc's pure modules.
import { readFileSync } from 'node:fs';
import { Script, createContext, runInContext } from 'node:vm';
import test from 'ava';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';

// Ids are paths from the bundler's directory (a linked node_modules gives '../…' ones).
const PER_WORKFLOW = new RegExp(
  [
    String.raw`^\./(workflows(/[\w.-]+)*|core)/[\w.-]+\.ts$`,
    String.raw`^(\.\.?/)+([\w.-]+/)*node_modules/@temporalio/workflow/lib/[\w/.-]+\.js$`,
  ].join('|'),
);

/** Boots the bundle as the SDK's reusable context does; answers the modules one workflow evaluates. */
async function perWorkflowModules(): Promise<{ shared: string[]; perWorkflow: string[] }> {
  const bundlePath = process.env.SVC_WORKFLOW_BUNDLE;
  const code = bundlePath ? readFileSync(bundlePath, 'utf8') : (await buildWorkflowBundle()).code;
  const shared = new Map<string | symbol, unknown>();
  let instance: Map<string | symbol, unknown> | null = null;
  const moduleCache = new Proxy(
    {},
    {
      get: (_, id) => shared.get(id) ?? instance?.get(id),
      set: (_, id, value) => ((instance ?? shared).set(id, value), true),
    },
  );
  const context = createContext({ console, TextEncoder, TextDecoder, URL, URLSearchParams, AbortController });
  Object.defineProperty(context, '__webpack_module_cache__', { value: moduleCache });
  Object.assign(context, { __temporal_globalSandboxDestructors: [] });
  new Script(code).runInContext(context);
  instance = new Map();
  runInContext('__TEMPORAL__.importWorkflows()', context);
  return { shared: [...shared.keys()].map(String), perWorkflow: [...instance.keys()].map(String) };
}

test("a workflow evaluates only svc's workflows, its pure core modules and the SDK's workflow API", async (t) => {
  const { shared, perWorkflow } = await perWorkflowModules();
  t.true(
    shared.some((id) => id.includes('@temporalio/workflow/')),
    'the SDK boots shared',
  );
  t.true(perWorkflow.includes('./workflows/run/run.workflow.ts'), 'the run workflow is evaluated per workflow');
  t.true(perWorkflow.includes('./core/finalize.ts'));
  t.deepEqual(
    perWorkflow.filter((id) => !PER_WORKFLOW.test(id)),
    [],
    'a library imported by a workflow is evaluated again for every workflow: keep it out of workflows/ and core/',
  );
});
