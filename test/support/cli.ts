// Running the real `svc` command line in tests, with no client configuration of the machine's.
import { spawnSvc } from './processes.ts';
import type { TestStack } from './stack.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout's JSON lines, parsed. */
  lines: any[];
}

export async function svcCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<CliResult> {
  const handle = spawnSvc(
    args,
    { ...process.env, SVC_CLIENT_CONFIG: '/nonexistent/client.json', SVC_BASE_URL: '', SVC_API_TOKEN: '', ...env },
    input,
  );
  let stdout = '';
  let stderr = '';
  handle.child.stdout!.on('data', (chunk) => (stdout += chunk));
  handle.child.stderr!.on('data', (chunk) => (stderr += chunk));
  const code = await handle.exited;
  const lines = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  return { code, stdout, stderr, lines };
}

/** The flags that point a command at a test stack. */
export const remote = (svc: Pick<TestStack, 'url' | 'token'>) => [`--url=${svc.url}`, `--token=${svc.token}`];
