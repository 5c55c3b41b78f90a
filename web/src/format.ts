// How numbers, times and states read on screen: one home for each, so every page says them alike.

const usd = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** `$0.0123`, `~$0.01 est.` for a subscription estimate, `—` when unpriced. */
export function money(value: number | null | undefined, estimate = false): string {
  if (value === null || value === undefined) return '—';
  return estimate ? `~${usd.format(value)} est.` : usd.format(value);
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : compact.format(value);
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${Math.round(value * 100)}%`;
}

/** `4.2 s`, `3 min 10 s`, `2 h 5 min`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** The span between two instants, running until now while the end is open. */
export function span(start: string | number | null | undefined, end: string | number | null | undefined): string {
  if (start === null || start === undefined) return '—';
  const from = new Date(start).getTime();
  const to = end === null || end === undefined ? Date.now() : new Date(end).getTime();
  return duration(to - from);
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function when(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return dateTime.format(new Date(value));
}

/** `5 min ago`, `in 2 h`. */
export function relative(value: string | number | null | undefined, now = Date.now()): string {
  if (value === null || value === undefined) return '—';
  const delta = new Date(value).getTime() - now;
  const abs = Math.abs(delta);
  const text =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 172_800_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return delta < 0 ? `${text} ago` : `in ${text}`;
}

export function shortSha(sha: string | null | undefined): string {
  return sha ? sha.slice(0, 8) : '—';
}

/** The tokens a run used, input + output, with the cache reads named when there are any. */
export function tokens(run: {
  tokensInput: number | null;
  tokensOutput: number | null;
  tokensCacheRead: number | null;
}): string {
  if (run.tokensInput === null && run.tokensOutput === null) return '—';
  const main = `${count(run.tokensInput ?? 0)} in · ${count(run.tokensOutput ?? 0)} out`;
  return run.tokensCacheRead ? `${main} · ${count(run.tokensCacheRead)} cached` : main;
}

/** The URL if it is http(s), else undefined: a link never runs script, whatever a field holds. */
export function httpUrl(url: string | null | undefined): string | undefined {
  return url && /^https?:\/\//i.test(url) ? url : undefined;
}
