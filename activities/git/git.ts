// Running git for svc: never interactive, credentials only through the environment (never argv),
// failures carrying git's own message.
import { execFile } from 'node:child_process';

export class GitError extends Error {
  readonly args: string[];
  readonly stderr: string;
  constructor(args: string[], stderr: string, message: string) {
    super(message);
    this.args = args;
    this.stderr = stderr;
  }
}

export interface GitOptions {
  cwd?: string;
  /** A GitHub token for https://github.com/ (sent as a Basic auth header via GIT_CONFIG_*). */
  token?: string | undefined;
  timeoutMs?: number;
  /**
   * For git on content an agent wrote, with no network needed: none of the machine's or the user's
   * git config (an installed LFS filter, say, would fetch what the agent's `.lfsconfig` names).
   */
  isolated?: boolean;
}

export function gitEnv(token: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'true', SSH_ASKPASS: 'true' };
  if (token) {
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.https://github.com/.extraheader',
      GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
    });
  }
  return env;
}

const ISOLATED_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_LFS_SKIP_SMUDGE: '1' };

export function git(args: string[], options: GitOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd: options.cwd,
        env: options.isolated ? { ...gitEnv(options.token), ...ISOLATED_ENV } : gitEnv(options.token),
        timeout: options.timeoutMs ?? 300_000,
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => {
        if (error) {
          const detail = stderr.trim().split('\n').filter(Boolean).slice(-3).join(' / ') || error.message;
          reject(new GitError(args, stderr, `git ${args[0]} failed: ${detail}`));
        } else {
          resolve(stdout.trim());
        }
      },
    );
  });
}

/** git, answering undefined instead of throwing: for probes such as rev-parse --verify. */
export async function gitProbe(args: string[], options: GitOptions = {}): Promise<string | undefined> {
  try {
    return await git(args, options);
  } catch {
    return undefined;
  }
}
