// The dispatch bench's floor: the same workflow start as POST /runs, behind the thinnest HTTP server
// Node has (node:http, no framework, no auth, no validation, no read model), in a process of its own
// as the API is. What it takes over a bare `workflow.start` is what any HTTP API in front of
// Temporal pays on this machine (the hop, a second process woken twice); what POST /runs takes over
// it is svc's own (docs/performance.md, "POST /runs").
//   node floor-server.ts <temporal address> <task queue> <workspaces dir>   (prints "floor: <url>")
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { runSearchAttributes } from '../../core/search-attributes.ts';
import { nodeFlags } from '../../platform/node-flags.ts';

/** Starts the floor server as its own process, under the API's Node flags; answers its URL. */
export async function startFloorServer(
  args: { address: string; taskQueue: string; workspacesDir: string },
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags(env),
      '--no-warnings',
      fileURLToPath(import.meta.url),
      args.address,
      args.taskQueue,
      args.workspacesDir,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let printed = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('the floor server did not listen within 30 s'));
    }, 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const found = /floor: (\S+)/.exec(printed);
      if (!found) return;
      clearTimeout(timer);
      resolve(found[1]!);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the floor server exited (${code}) before it listened`));
    });
  });
  return { url, stop: () => child.kill() };
}

async function serve(address: string, taskQueue: string, workspacesDir: string): Promise<void> {
  const client = new Client({ connection: await Connection.connect({ address }) });
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      if (request.method !== 'POST') return response.writeHead(200).end('{}');
      const { prompt, trigger } = JSON.parse(Buffer.concat(chunks).toString()) as { prompt: string; trigger: string };
      const input = buildRunInput(
        { runId: newId('run'), createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt, trigger },
        workspacesDir,
      );
      // The API's own start options (its memo included), so only what is around the call differs.
      await client.workflow.start('runWorkflow', {
        workflowId: input.runId,
        taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: runSearchAttributes(input),
        memo: { agent: input.agent.name, projectId: input.projectId, trigger: input.trigger },
      });
      response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ run: { id: input.runId } }));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    console.log(`floor: http://127.0.0.1:${port}`);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  await serve(process.argv[2]!, process.argv[3]!, process.argv[4]!);
