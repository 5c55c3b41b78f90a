import { useEffect, useState } from 'preact/hooks';

/** The current time, re-read every `everyMs` while `active` (running durations tick). */
export function useNow(active: boolean, everyMs = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [active, everyMs]);
  return now;
}

/** Sets the document title while a page is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · svc`;
  }, [title]);
}

/**
 * Runs `action` again and again while `behind` holds: first after `firstMs`, then twice as long
 * each time, at most `maxMs` apart. For a view that knows it trails the truth and that nothing
 * else will tell it when it has caught up (see api/plan-run-lag.ts).
 */
export function useReReadWhile(behind: boolean, action: () => Promise<void>, firstMs = 250, maxMs = 8000): void {
  useEffect(() => {
    if (!behind) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const after = (delayMs: number) => {
      timer = setTimeout(() => {
        void action().finally(() => {
          if (!stopped) after(Math.min(delayMs * 2, maxMs));
        });
      }, delayMs);
    };
    after(firstMs);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [behind]);
}
