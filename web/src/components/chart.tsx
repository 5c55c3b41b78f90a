// A uPlot chart of daily values, sized to its container. The box has a fixed height (styles.css
// .chart), so nothing shifts when it draws; colours come from the theme's CSS variables and are
// re-read when the system switches light/dark. uPlot styles elements through the CSSOM, which the
// page's CSP (style-src 'self') allows; its stylesheet is bundled as a file.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** A colour variable of styles.css, e.g. `--good`. */
  color: string;
}

export interface ChartProps {
  /** What the chart shows ("Runs per day"): the start of its accessible summary. */
  title: string;
  /** Unix seconds, ascending (UTC days). */
  x: number[];
  series: ChartSeries[];
  kind?: 'line' | 'bars';
  /** Bars only: each series drawn on top of the ones before it. */
  stacked?: boolean;
  /** Whole-number ticks only (counts). */
  integer?: boolean;
  /** How a value reads in the legend and the summary. */
  format?: (value: number) => string;
  /** How a y-axis tick reads (default: format). */
  axisFormat?: (value: number) => string;
}

const DAY_S = 86_400;
const INTEGER_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];
const bars = uPlot.paths.bars?.({ size: [0.7, 48], gap: 1 });

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
const sum = (values: (number | null)[]) => values.reduce<number>((total, value) => total + (value ?? 0), 0);

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || 'gray';
}

/** Running sums: series i reaches the top of the stack of series 0..i. */
function stackUp(series: ChartSeries[]): number[][] {
  const sums = series[0]?.values.map(() => 0) ?? [];
  return series.map((item) => item.values.map((value, index) => (sums[index] += value ?? 0)));
}

/** One sentence for assistive tech: the span, each series' total and the busiest day. */
export function summarize(props: ChartProps): string {
  const { title, x, series, format = String } = props;
  if (x.length === 0) return `${title}: no data`;
  const totals = series.map((item) => `${item.label} ${format(sum(item.values))}`).join(', ');
  const perDay = x.map((_, index) => series.reduce((total, item) => total + (item.values[index] ?? 0), 0));
  const peak = perDay.indexOf(Math.max(...perDay));
  return (
    `${title}, ${day(x[0]!)} to ${day(x[x.length - 1]!)}. Totals: ${totals}. ` +
    `Highest: ${format(perDay[peak]!)} on ${day(x[peak]!)}.`
  );
}

/** Day ticks that fit the width: every day, or every n-th. */
function daySplits(plot: uPlot, x: number[]): number[] {
  const room = Math.max(1, Math.floor((plot.width - 60) / 64));
  const step = Math.ceil(x.length / room);
  return x.filter((_, index) => index % step === 0);
}

function options(props: ChartProps, width: number, height: number): uPlot.Options {
  const { x, series, kind = 'line', stacked = false, integer = false, format = String } = props;
  const axisFormat = props.axisFormat ?? format;
  const barChart = kind === 'bars';
  const muted = cssVar('--muted');
  const border = cssVar('--border');
  const font = `12px ${getComputedStyle(document.documentElement).fontFamily}`;
  const axis = {
    stroke: muted,
    font,
    grid: { stroke: border, width: 1 },
    ticks: { stroke: border, width: 1, size: 4 },
  };
  // Bars and a lone point need half a day of room either side, or they are cut at the edge.
  const pad = barChart || x.length < 2 ? DAY_S / 2 : 0;
  return {
    width,
    height,
    cursor: { drag: { x: false, y: false }, y: false },
    legend: { live: true },
    scales: {
      x: { time: false, range: () => [x[0]! - pad, x[x.length - 1]! + pad] },
      y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      {
        ...axis,
        splits: (plot) => daySplits(plot, x),
        values: (_plot, splits) => splits.map((split) => day(split).slice(5)),
      },
      {
        ...axis,
        ...(integer ? { incrs: INTEGER_INCRS } : {}),
        values: (_plot, splits) => splits.map((split) => axisFormat(split)),
        size: (_plot, values) => 16 + 7 * Math.max(3, ...(values ?? []).map((value) => value.length)),
      },
    ],
    series: [
      { label: 'Day', value: (_plot, raw) => (raw === null ? '—' : day(raw)) },
      ...drawOrder(series, barChart && stacked).map((index): uPlot.Series => {
        const item = series[index]!;
        const colour = cssVar(item.color);
        return {
          label: item.label,
          stroke: colour,
          width: barChart ? 0 : 2,
          ...(barChart ? { fill: colour, paths: bars } : {}),
          points: { show: !barChart && x.length <= 31, size: 5, fill: colour },
          // The legend reads the day's own value, not the stacked sum that is drawn.
          value: (_plot, _raw, _series, at) => (at === null ? '—' : format(item.values[at] ?? 0)),
        };
      }),
    ],
  };
}

/** uPlot paints series in order: a stack paints its tallest sum first, so every shorter one shows in front. */
function drawOrder(series: ChartSeries[], stacked: boolean): number[] {
  const order = series.map((_, index) => index);
  return stacked ? order.reverse() : order;
}

function data(props: ChartProps): uPlot.AlignedData {
  const { x, series, kind = 'line', stacked = false } = props;
  const stack = kind === 'bars' && stacked;
  const drawn = stack ? stackUp(series) : series.map((item) => item.values);
  return [x, ...drawOrder(series, stack).map((index) => drawn[index]!)];
}

/** A daily chart; an empty `x` draws an empty frame of the same height. */
export function Chart(props: ChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  latest.current = props;
  // Pages rerender with equal but new arrays: rebuild only when what is drawn changed.
  const signature = JSON.stringify([props.x, props.series, props.kind, props.stacked, props.integer]);

  useEffect(() => {
    const element = host.current;
    if (!element || latest.current.x.length === 0) return;
    let plot: uPlot | undefined;
    let fittedWidth = -1;
    const fit = (force = false) => {
      const width = element.clientWidth;
      if (!plot || (!force && width === fittedWidth)) return;
      fittedWidth = width;
      const chart = plot;
      // The legend wraps with the width: lay out at the new width now (batch commits at once, not in a
      // microtask), then give the plot what the legend leaves of the fixed height.
      chart.batch(() => chart.setSize({ width, height: chart.height }));
      const legend = chart.root.querySelector<HTMLElement>('.u-legend')?.offsetHeight ?? 0;
      chart.batch(() => chart.setSize({ width, height: Math.max(80, element.clientHeight - legend) }));
    };
    const build = () => {
      plot?.destroy();
      const height = element.clientHeight;
      plot = new uPlot(options(latest.current, element.clientWidth || 300, height), data(latest.current), element);
      fit(true);
    };
    build();
    const observer = new ResizeObserver(() => fit());
    observer.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', build);
    return () => {
      observer.disconnect();
      scheme.removeEventListener('change', build);
      plot?.destroy();
    };
  }, [signature]);

  return <div ref={host} class="chart" role="img" aria-label={summarize(props)} />;
}

/** The chart's box while its data loads: the same height, so nothing moves when it arrives. */
export function ChartPlaceholder() {
  return <div class="chart chart-loading" aria-busy="true" aria-label="Loading chart" />;
}
