// Waits for SIGINT/SIGTERM (or a fatal error of a long-running part) and runs the shutdown once.
// A second signal while shutting down forces the exit.
export async function runUntilSignalled(
  stop: () => Promise<void>,
  fatal: Promise<unknown>,
  log: (line: string) => void,
): Promise<number> {
  let signalled = 0;
  const signal = new Promise<string>((resolve) => {
    const onSignal = (name: string) => {
      signalled += 1;
      if (signalled > 1) process.exit(130);
      resolve(name);
    };
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
  });
  const reason = await Promise.race([
    signal,
    fatal.then(
      () => 'worker-stopped',
      (error) => `fatal: ${String(error)}`,
    ),
  ]);
  log(`svc: shutting down (${reason})`);
  await stop();
  log('svc: stopped');
  return reason.startsWith('SIG') ? 0 : 1;
}
