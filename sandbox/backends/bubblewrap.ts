// The local sandbox's boundary, as a bubblewrap command line: a fresh root holding a read-only
// minimal system (/usr and its links, a short list of /etc), the agent's toolchain read-only, its
// workspace, home and /tmp writable, svc's in-sandbox programs and proxy sockets, and nothing
// else; its own user, PID, IPC, UTS, cgroup and network namespaces; every capability dropped,
// no_new_privs, no nested user namespaces. Under a root svc the agent also runs as an
// unprivileged host uid of its own, so root-owned files and root's processes stay closed to it.
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import type { SandboxLayout } from '../spec.ts';

/** Where things are inside every sandbox. */
export const SANDBOX_PATHS = {
  workspace: '/workspace',
  home: '/home/agent',
  tmp: '/tmp',
  bin: '/run/svc/bin',
  net: '/run/svc/net',
  outbox: '/run/svc/outbox',
} as const;

/** The agent's uid and gid inside its user namespace. */
export const SANDBOX_INNER_ID = 1000;

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The parts of /etc programs need (TLS roots, the dynamic linker, alternatives); no host secrets. */
const SYSTEM_ETC = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'gai.conf',
  'host.conf',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'profile',
  'protocols',
  'services',
  'ssl',
  'terminfo',
  'timezone',
];

export interface BubblewrapOptions {
  /** Tie the sandbox to its starter: right for the agent (its supervisor), not for a detached finalizer. */
  dieWithParent: boolean;
  /** The unprivileged host uid/gid to become first (svc runs as root); null when svc is not root. */
  hostId: number | null;
  /** Processes (and threads) the run's host uid may have at once: a fork bomb stays in its run. */
  maxProcesses: number;
}

function systemMounts(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    if (!existsSync(dir)) continue;
    const stat = lstatSync(dir);
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const name of SYSTEM_ETC) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  return args;
}

/** One mount of the sandbox: a bubblewrap operation and its target. */
type Mount = [operation: string, source: string | null, target: string];

/**
 * The mounts in order, each preceded by the directories above its target, made 0755: bubblewrap
 * would make them 0700 as root, and the agent's uid could not reach its toolchain through them.
 * The toolchain comes after /tmp, so a toolchain that lives under /tmp is not hidden by it.
 */
function mounts(layout: SandboxLayout): string[] {
  const sequence: Mount[] = [
    ...layout.etcFiles.map((file): Mount => ['--ro-bind', file.source, file.target]),
    ['--proc', null, '/proc'],
    ['--dev', null, '/dev'],
    ['--bind', layout.workspace, SANDBOX_PATHS.workspace],
    ['--bind', layout.home, SANDBOX_PATHS.home],
    ['--bind', layout.tmp, SANDBOX_PATHS.tmp],
    ...layout.toolchain.map((dir): Mount => ['--ro-bind', dir, dir]),
    ...layout.programs.map((program): Mount => ['--ro-bind', program.source, program.target]),
    ...(layout.socketDir ? [['--ro-bind', layout.socketDir, SANDBOX_PATHS.net] as Mount] : []),
    ...(layout.outbox ? [['--bind', layout.outbox, SANDBOX_PATHS.outbox] as Mount] : []),
    ...layout.binds.map((bind): Mount => [bind.writable ? '--bind' : '--ro-bind', bind.source, bind.target]),
  ];
  const made = new Set<string>(['/etc']);
  const args = ['--perms', '0755', '--dir', '/etc', ...systemMounts()];
  for (const [operation, source, target] of sequence) {
    const parts = target.split('/').filter(Boolean);
    for (let depth = 1; depth < parts.length; depth++) {
      const dir = `/${parts.slice(0, depth).join('/')}`;
      if (made.has(dir) || SYSTEM_DIRS.includes(dir)) continue;
      made.add(dir);
      args.push('--perms', '0755', '--dir', dir);
    }
    made.add(target);
    args.push(operation, ...(source === null ? [] : [source]), target);
  }
  // The fresh root itself (mount points, links) is read-only to the agent too.
  return [...args, '--remount-ro', '/'];
}

const NAMESPACES = [
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-net',
  '--unshare-cgroup-try',
  '--hostname',
  'svc-sandbox',
];

/** The user namespace the agent lives in: uid 1000 there, no capabilities, no nested user namespaces. */
function userNamespace(dieWithParent: boolean): string[] {
  const id = String(SANDBOX_INNER_ID);
  return [
    '--unshare-user',
    '--disable-userns',
    '--uid',
    id,
    '--gid',
    id,
    '--cap-drop',
    'ALL',
    ...(dieWithParent ? ['--die-with-parent'] : []),
  ];
}

/**
 * The full argv that runs `command` inside the sandbox described by `layout`. As an unprivileged
 * svc: one bubblewrap, all namespaces at once. As root: bubblewrap builds the namespaces and
 * mounts with root's reach (the data directory stays 0700), then setpriv drops to the run's host
 * uid (every capability, the bounding set, no_new_privs) and a second, unprivileged bubblewrap
 * puts that uid in its user namespace. Nothing of the agent's runs before the drop.
 */
export function bubblewrapArgv(layout: SandboxLayout, command: string[], options: BubblewrapOptions): string[] {
  const dieWithParent = options.dieWithParent ? ['--die-with-parent'] : [];
  const inWorkspace = ['--chdir', SANDBOX_PATHS.workspace];
  if (options.hostId === null)
    return [
      'bwrap',
      ...userNamespace(options.dieWithParent),
      ...NAMESPACES,
      ...mounts(layout),
      ...inWorkspace,
      '--',
      ...command,
    ];
  const host = String(options.hostId);
  return [
    'bwrap',
    ...NAMESPACES,
    '--cap-drop',
    'ALL',
    '--cap-add',
    'CAP_SETUID',
    '--cap-add',
    'CAP_SETGID',
    '--cap-add',
    'CAP_SETPCAP',
    ...dieWithParent,
    ...mounts(layout),
    // Root without CAP_DAC_OVERRIDE cannot enter the agent's 0700 workspace: the inner layer does.
    '--chdir',
    '/',
    // RLIMIT_NPROC counts per uid: with a uid of the run's own, it is a per-run process limit.
    '--',
    'prlimit',
    `--nproc=${options.maxProcesses}:${options.maxProcesses}`,
    '--',
    'setpriv',
    '--reuid',
    host,
    '--regid',
    host,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
    'bwrap',
    ...userNamespace(options.dieWithParent),
    '--dev-bind',
    '/',
    '/',
    ...inWorkspace,
    '--',
    ...command,
  ];
}

/**
 * The sandbox's /etc/passwd, /etc/group and /etc/hosts: the agent (uid 1000 in bubblewrap's user
 * namespace, the run's host uid in a container), and nothing of the host's.
 */
export function sandboxEtc(
  id: number = SANDBOX_INNER_ID,
  /** The run's services, on the sandbox's own loopback (container-services.ts). */
  serviceNames: string[] = [],
): Record<'passwd' | 'group' | 'hosts', string> {
  return {
    passwd: [
      'root:x:0:0:root:/root:/usr/sbin/nologin',
      `agent:x:${id}:${id}:svc agent:${SANDBOX_PATHS.home}:/bin/bash`,
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
      '',
    ].join('\n'),
    group: `root:x:0:\nagent:x:${id}:\nnogroup:x:65534:\n`,
    hosts:
      `127.0.0.1\t${['localhost', 'svc-sandbox', ...serviceNames].join(' ')}\n` +
      '::1\tlocalhost ip6-localhost ip6-loopback\n',
  };
}
