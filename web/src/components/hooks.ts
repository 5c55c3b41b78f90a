import { useEffect, useRef, useState } from 'preact/hooks';

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
 * each time, at most `maxMs` apart, and in a hidden tab only once it is seen again. For a view
 * that knows it trails the truth and that nothing else will tell it when it has caught up (see
 * api/plan-run-lag.ts). The latest `action` is the one run (a page kept across routes).
 */
export function useReReadWhile(behind: boolean, action: () => Promise<void>, firstMs = 250, maxMs = 10_000): void {
  const latest = useRef(action);
  latest.current = action;
  useEffect(() => {
    if (!behind) return;
    let delayMs = firstMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let waitingToBeSeen = false;
    const tick = () => {
      if (document.visibilityState !== 'visible') {
        waitingToBeSeen = true;
        return;
      }
      void latest.current().finally(() => {
        if (!stopped) timer = setTimeout(tick, (delayMs = Math.min(delayMs * 2, maxMs)));
      });
    };
    const onVisibility = () => {
      if (!waitingToBeSeen || document.visibilityState !== 'visible') return;
      waitingToBeSeen = false;
      tick();
    };
    document.addEventListener('visibilitychange', onVisibility);
    timer = setTimeout(tick, delayMs);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [behind]);
}
