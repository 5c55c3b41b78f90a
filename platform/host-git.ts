// git on svc's host, the one way svc runs it outside a sandbox: clones, workspace cuts, fetches,
// pushes, diffs. Only svc's own settings count. The machine's and the account's git config, and the
// environment's GIT_* variables, are never read: HOME is an empty directory of svc's. No hook,
// fsmonitor, credential helper or external diff runs. Submodules are never followed. A command
// reaches the forge only when it is handed the forge's remote, and local files otherwise. In a work
// tree svc checks out, info/attributes unsets every filter, so no LFS or other filter driver ever runs,
// whatever a .gitattributes or a config names (docs/decisions/0043-host-git-obeys-only-svc.md).
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GITHUB_GIT_URL } from '../core/git-url.ts';

/** Where svc's git reaches a repository's forge, and the token it sends there (undefined: anonymous). */
export interface ForgeRemote {
  /** The prefix that stands for `https://github.com/`: GITHUB_GIT_URL, a mirror, or a directory (file://). */
  url: string;
  token: string | undefined;
}

export interface GitOptions {
  /** The repository (its work tree, or a bare repository) the command runs in. */
  cwd?: string;
  /** For a command that reaches the forge. Without it git may read and write local files only. */
  remote?: ForgeRemote;
  timeoutMs?: number;
}

export class GitError extends Error {
  readonly args: string[];
  readonly stderr: string;
  constructor(args: string[], stderr: string, message: string) {
    super(message);
    this.args = args;
    this.stderr = stderr;
  }
}

/** What git may take from the worker's environment: where it finds programs, locale, proxies, CAs. */
const PASSED_THROUGH = [
  'PATH',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'http_proxy',
  'https_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'all_proxy',
  'ALL_PROXY',
  'no_proxy',
  'NO_PROXY',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'CURL_CA_BUNDLE',
];

/**
 * svc's settings, at command-line scope: over anything a repository's own config could say. Each
 * key here names a program git would run or a file it would read.
 */
const SVC_SETTINGS: [string, string][] = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.attributesFile', '/dev/null'],
  // The empty value empties the list of helpers a config could have named.
  ['credential.helper', ''],
  ['diff.external', ''],
  ['commit.gpgSign', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['submodule.recurse', 'false'],
  ['protocol.allow', 'never'],
  // Local paths and file:// only: the project clone, bundles, svc's scratch repositories.
  ['protocol.file.allow', 'always'],
];

/** A work tree's info/attributes while svc checks it out: it wins over every .gitattributes. */
const FILTER_SHIELD = '* !filter\n';

let emptyHome: string | undefined;

/** An empty directory of svc's, removed when the process exits: git's HOME, and its cwd when it needs none. */
function home(): string {
  if (emptyHome) return emptyHome;
  const made = mkdtempSync(join(tmpdir(), 'svc-git-home-'));
  process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  emptyHome = made;
  return made;
}

function remoteSettings(remote: ForgeRemote): [string, string][] {
  const scheme = new URL(remote.url).protocol.slice(0, -1);
  const settings: [string, string][] = [[`protocol.${scheme}.allow`, 'always']];
  if (remote.url !== GITHUB_GIT_URL) settings.push([`url.${remote.url}.insteadOf`, GITHUB_GIT_URL]);
  if (remote.token && (scheme === 'https' || scheme === 'http')) {
    // Through the environment, never argv (where `ps` would show it).
    const basic = Buffer.from(`x-access-token:${remote.token}`).toString('base64');
    settings.push([`http.${remote.url}.extraheader`, `AUTHORIZATION: basic ${basic}`]);
  }
  return settings;
}

/** The whole environment of svc's git in `cwd`: nothing of the worker's but PASSED_THROUGH. */
function gitEnvironment(
  cwd: string,
  settings: [string, string][],
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_THROUGH) if (process.env[name] !== undefined) env[name] = process.env[name];
  Object.assign(env, {
    HOME: home(),
    XDG_CONFIG_HOME: home(),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_LFS_SKIP_SMUDGE: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    SSH_ASKPASS: 'true',
    GIT_SSH_COMMAND: 'false',
    GIT_EDITOR: 'true',
    // A repository is looked for in cwd only, never in a directory above it.
    GIT_CEILING_DIRECTORIES: dirname(cwd),
    GIT_CONFIG_COUNT: String(settings.length),
  });
  settings.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return { ...env, ...extra };
}

function settingsFor(remote: ForgeRemote | undefined, own: [string, string][] = []): [string, string][] {
  return [...SVC_SETTINGS, ...own, ...(remote ? remoteSettings(remote) : [])];
}

/** git's failure in its own words (the last lines of stderr), named by its subcommand. */
function failure(args: string[], stderr: string, fallback: string, how = ''): GitError {
  const detail = stderr.trim().split('\n').filter(Boolean).slice(-3).join(' / ') || fallback;
  const command = args.find((arg, index) => !arg.startsWith('-') && args[index - 1] !== '-c') ?? args[0];
  return new GitError(args, stderr, `git ${command} failed${how}: ${detail}`);
}

/** Runs git and answers its trimmed stdout; rejects with git's own message. */
export function git(args: string[], options: GitOptions = {}): Promise<string> {
  const cwd = options.cwd ?? home();
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        env: gitEnvironment(cwd, settingsFor(options.remote)),
        timeout: options.timeoutMs ?? 300_000,
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => (error ? reject(failure(args, stderr, error.message)) : resolve(stdout.trim())),
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

export interface BoundedOutput {
  stdout: Buffer;
  /** The output went past the cap: git was stopped, `stdout` is its first `cap` bytes. */
  cut: boolean;
}

export interface BoundedGitOptions {
  /** A bare repository of svc's, which git runs in. */
  gitDir: string;
  /** Settings of the caller's, after svc's own. */
  settings?: [string, string][];
  env?: Record<string, string>;
  /** Address space git may take (KiB, `ulimit -v`): a crafted object fails it, not the worker. */
  addressSpaceKiB?: number;
  cap?: number;
  /** Takes each chunk of stdout instead of collecting it; answers false to stop git. */
  onChunk?: (chunk: Buffer) => boolean;
  timeoutMs?: number;
}

/**
 * git on objects nobody trusts, its stdout collected up to `cap` bytes (or handed to `onChunk`).
 * Rejects on git's failure, on a timeout, and when it ends by a signal svc did not send.
 */
export function gitBounded(args: string[], options: BoundedGitOptions): Promise<BoundedOutput> {
  const { gitDir } = options;
  const cap = options.cap ?? 1 << 20;
  const [command, argv] = options.addressSpaceKiB
    ? ['/bin/sh', ['-c', `ulimit -v ${options.addressSpaceKiB} && exec git "$@"`, 'git', ...args]]
    : ['git', args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      cwd: gitDir,
      env: gitEnvironment(gitDir, settingsFor(undefined, options.settings), { ...options.env, GIT_DIR: gitDir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    const stop = () => {
      cut = true;
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      if (options.onChunk) {
        if (!options.onChunk(chunk)) stop();
        return;
      }
      const room = cap - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (chunk.length > room) stop();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new GitError(args, '', `git could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (cut) return resolve({ stdout: Buffer.concat(chunks), cut: true });
      if (code === 0) return resolve({ stdout: Buffer.concat(chunks), cut: false });
      reject(failure(args, stderr, 'no message', ` (${signal ?? `exit ${code}`})`));
    });
  });
}

/**
 * Unsets every filter in the work tree whose git directory is `gitDir`, before svc checks anything
 * out there: a `filter=lfs` (or any name) in the content svc checks out then names no driver, even
 * one a config svc did not write would define.
 */
export function shieldFilters(gitDir: string): void {
  mkdirSync(join(gitDir, 'info'), { recursive: true });
  writeFileSync(join(gitDir, 'info', 'attributes'), FILTER_SHIELD);
}

/** Removes shieldFilters' file: from a workspace, before the agent's own git sees it. */
export function dropFilterShield(gitDir: string): void {
  rmSync(join(gitDir, 'info', 'attributes'), { force: true });
}

/** The installed git's version line, for `svc doctor`; throws when git is missing. */
export function gitVersion(): string {
  const cwd = home();
  return execFileSync('git', ['--version'], {
    cwd,
    env: gitEnvironment(cwd, SVC_SETTINGS),
    encoding: 'utf8',
    stdio: 'pipe',
    timeout: 5000,
  }).trim();
}

/**
 * A value of this account's own git config (`git config --global --get`), for `svc doctor`'s hint
 * about git run by hand: read, never obeyed by svc's git. '' when unset.
 */
export function accountGitConfig(key: string): string {
  try {
    return execFileSync('git', ['config', '--global', '--get', key], {
      cwd: home(),
      encoding: 'utf8',
      stdio: 'pipe',
      timeout: 5000,
    }).trim();
  } catch {
    return '';
  }
}
