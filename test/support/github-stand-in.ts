// GitHub, stood in locally: bare repositories under one directory per test process, which svc's
// git reaches through SVC_GITHUB_GIT_URL (set here for this process and its children: svc reads no
// git config of the machine's or the account's), and a git config (GIT_CONFIG_GLOBAL) whose
// url.insteadOf points the tests' own git at them too. The production code clones
// "https://github.com/owner/name.git" and pushes a run's work from its own side (sandboxes hand
// their commits over as bundles).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const SD_BIN = resolve('node_modules/.bin');

/**
 * One directory of bare repositories for the whole process: a stack started before a stand-in is
 * made still reaches its repositories. A repository made again replaces the earlier one.
 */
const REPOS = join(mkdtempSync(join(tmpdir(), 'svc-github-')), 'repos');
mkdirSync(REPOS, { recursive: true });
process.env.SVC_GITHUB_GIT_URL = `file://${REPOS}/`;

export class GitHubStandIn {
  readonly root: string;
  readonly gitConfig: string;
  readonly #work: string;

  constructor() {
    const base = mkdtempSync(join(tmpdir(), 'svc-github-'));
    this.root = REPOS;
    this.#work = join(base, 'work');
    this.gitConfig = join(base, 'gitconfig');
    writeFileSync(
      this.gitConfig,
      [
        `[url "file://${this.root}/"]`,
        '\tinsteadOf = https://github.com/',
        '[user]',
        '\tname = Test Author',
        '\temail = test@example.com',
        '[init]',
        '\tdefaultBranch = main',
        '[advice]',
        '\tdetachedHead = false',
      ].join('\n') + '\n',
    );
    process.env.GIT_CONFIG_GLOBAL = this.gitConfig;
    process.env.GIT_CONFIG_NOSYSTEM = '1';
  }

  /** The forge's own git: its config, whatever this process's GIT_CONFIG_GLOBAL says meanwhile. */
  git(cwd: string, ...args: string[]): string {
    const env = { ...process.env, GIT_CONFIG_GLOBAL: this.gitConfig, GIT_CONFIG_NOSYSTEM: '1' };
    return execFileSync('git', args, { cwd, encoding: 'utf8', env }).trim();
  }

  /** A working copy of owner/name, pushing to its bare repository. */
  workdir(owner: string, name: string): string {
    return join(this.#work, owner, name);
  }

  createRepo(
    owner: string,
    name: string,
    options: { files?: Record<string, string>; defaultBranch?: string; otherBranches?: string[] } = {},
  ): string {
    const bare = join(this.root, owner, `${name}.git`);
    const branch = options.defaultBranch ?? 'main';
    rmSync(bare, { recursive: true, force: true });
    mkdirSync(dirname(bare), { recursive: true });
    this.git(dirname(bare), 'init', '--quiet', '--bare', `--initial-branch=${branch}`, bare);
    const work = this.workdir(owner, name);
    mkdirSync(dirname(work), { recursive: true });
    mkdirSync(work, { recursive: true });
    this.git(work, 'init', '--quiet', `--initial-branch=${branch}`);
    this.git(work, 'remote', 'add', 'origin', bare);
    this.commit(owner, name, { 'README.md': `# ${name}\n`, ...options.files }, 'initial commit', branch);
    for (const other of options.otherBranches ?? []) {
      this.git(work, 'push', '--quiet', 'origin', `${branch}:${other}`);
    }
    return bare;
  }

  commit(owner: string, name: string, files: Record<string, string>, message: string, branch = 'main'): string {
    const work = this.workdir(owner, name);
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), content);
    }
    this.git(work, 'add', '-A');
    this.git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
    this.git(work, 'push', '--quiet', 'origin', `HEAD:${branch}`);
    return this.git(work, 'rev-parse', 'HEAD');
  }

  /** Runs the real seeds CLI (`sd`, on bun) in the working copy of owner/name. */
  sd(owner: string, name: string, ...args: string[]): string {
    return execFileSync(join(SD_BIN, 'sd'), args, {
      cwd: this.workdir(owner, name),
      encoding: 'utf8',
      env: { ...process.env, PATH: `${SD_BIN}:${process.env.PATH}` },
    }).trim();
  }

  /** Creates a seed with sd and answers its id. */
  createSeed(owner: string, name: string, title: string, extra: string[] = []): string {
    return (JSON.parse(this.sd(owner, name, 'create', '--title', title, '--json', ...extra)) as { id: string }).id;
  }

  /** Merges a pushed branch into the default branch on the "forge", as a PR merge would. */
  mergeBranch(owner: string, name: string, branch: string, into = 'main'): void {
    const work = this.workdir(owner, name);
    this.git(
      work,
      'fetch',
      '--quiet',
      'origin',
      `${branch}:refs/remotes/origin/${branch}`,
      `${into}:refs/remotes/origin/${into}`,
    );
    this.git(work, 'checkout', '--quiet', into);
    this.git(work, 'reset', '--quiet', '--hard', `origin/${into}`);
    this.git(work, 'merge', '--quiet', '--no-ff', '-m', `Merge ${branch}`, `origin/${branch}`);
    this.git(work, 'push', '--quiet', 'origin', `HEAD:${into}`);
  }

  /** The forge's git side for the pull-request stand-in: heads, changed files, merges, conflicts. */
  forgeGit() {
    return {
      headSha: (owner: string, name: string, branch: string) =>
        this.git(this.workdir(owner, name), 'ls-remote', 'origin', `refs/heads/${branch}`).split(/\s/)[0] ?? '',
      changedFiles: (owner: string, name: string, base: string, head: string) => {
        const work = this.workdir(owner, name);
        this.git(work, 'fetch', '--quiet', 'origin', `+refs/heads/*:refs/remotes/origin/*`);
        return this.git(work, 'diff', '--name-only', `origin/${base}...origin/${head}`).split('\n').filter(Boolean);
      },
      merge: (owner: string, name: string, branch: string, into: string) => this.mergeBranch(owner, name, branch, into),
      mergeable: (owner: string, name: string, base: string, head: string) => {
        const work = this.workdir(owner, name);
        this.git(work, 'fetch', '--quiet', 'origin', `+refs/heads/*:refs/remotes/origin/*`);
        try {
          this.git(work, 'merge-tree', '--write-tree', `origin/${base}`, `origin/${head}`);
          return true;
        } catch {
          return false; // exit status 1: conflicts
        }
      },
    };
  }

  pushAll(owner: string, name: string, message: string): string {
    return this.commit(owner, name, {}, message);
  }
}
