// The analytics page's two daily charts. The API lists only days with runs: every day of the
// applied window is drawn, the missing ones as zero, so the axis reads as a calendar.
import type { CostAnalytics, RunAnalytics } from '../api/types.ts';
import { count, money } from '../format.ts';
import { Chart } from './chart.tsx';

const DAY_MS = 86_400_000;
/** More days than the API ever answers (90): a guard against a malformed window, not a limit. */
const MAX_DAYS = 400;

/** Unix seconds of each UTC midnight from the day of `from` to the day of `to`. */
export function utcDays(from: string, to: string): number[] {
  const first = Math.floor(Date.parse(from) / DAY_MS);
  const last = Math.floor(Date.parse(to) / DAY_MS);
  if (!Number.isFinite(first) || !Number.isFinite(last)) return [];
  const days: number[] = [];
  for (let dayNumber = first; dayNumber <= last && days.length < MAX_DAYS; dayNumber++)
    days.push((dayNumber * DAY_MS) / 1000);
  return days;
}

/** The value of each day from buckets keyed `YYYY-MM-DD`; a day without a bucket is 0. */
export function perDay<T extends { key: string }>(days: number[], buckets: T[], pick: (bucket: T) => number): number[] {
  const byDay = new Map(buckets.map((bucket) => [bucket.key, pick(bucket)]));
  return days.map((day) => byDay.get(new Date(day * 1000).toISOString().slice(0, 10)) ?? 0);
}

/** Runs created per day, stacked by where they are now. */
export function RunsPerDayChart({ data }: { data: RunAnalytics }) {
  const days = utcDays(data.filter.from, data.filter.to);
  const series = (
    [
      ['succeeded', 'Succeeded', '--good'],
      ['failed', 'Failed', '--bad'],
      ['cancelled', 'Cancelled', '--warn'],
      ['active', 'Active', '--info'],
    ] as const
  ).map(([field, label, color]) => ({
    label,
    color,
    values: perDay(days, data.timeSeries, (bucket) => bucket[field]),
  }));
  return <Chart title="Runs per day" x={days} series={series} kind="bars" stacked integer format={count} />;
}

/** Spend of the runs created each day. */
export function CostPerDayChart({ data }: { data: CostAnalytics }) {
  const days = utcDays(data.filter.from, data.filter.to);
  const series = [
    { label: 'Cost', color: '--accent', values: perDay(days, data.breakdowns.date, (bucket) => bucket.costUsd) },
  ];
  return <Chart title="Cost per day" x={days} series={series} kind="line" format={money} axisFormat={axisMoney} />;
}

/** Tick labels stay short: whole dollars from $10, more decimals only for small amounts. */
function axisMoney(value: number): string {
  if (value === 0) return '$0';
  if (value >= 10) return `$${Math.round(value).toLocaleString('en-US')}`;
  return `$${value.toFixed(value < 0.1 ? 3 : 2)}`;
}
