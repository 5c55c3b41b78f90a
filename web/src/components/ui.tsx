// The small building blocks every page uses: state badges, errors, empty states, key-value lists,
// a pager. Plain elements with classes from styles.css; nothing here fetches.
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../api/client.ts';

const STATE_TONES: Record<string, string> = {
  queued: 'neutral',
  pending: 'neutral',
  dispatched: 'info',
  running: 'info',
  starting: 'info',
  succeeded: 'good',
  merged: 'good',
  live: 'good',
  pr_open: 'info',
  open: 'info',
  failed: 'bad',
  cancelled: 'warn',
  skipped: 'warn',
  closed_unmerged: 'warn',
  'torn-down': 'neutral',
};

/** A run, plan-run, child, PR or preview state as a coloured label (text, so no colour is needed to read it). */
export function StateBadge({ state }: { state: string | null | undefined }) {
  if (!state) return <span class="muted">—</span>;
  return (
    <span class={`badge tone-${STATE_TONES[state] ?? 'neutral'}`} data-state={state}>
      {state.replace(/_/g, ' ')}
    </span>
  );
}

export function ErrorBox({ error, title }: { error: ApiError | Error | undefined; title?: string }) {
  if (!error) return null;
  const api = error as ApiError;
  return (
    <div class="error-box" role="alert">
      <strong>{title ?? 'Something went wrong'}</strong>
      <p>
        {error.message}
        {api.code ? <code class="error-code">{api.code}</code> : null}
      </p>
      {api.hint ? <p class="muted">{api.hint}</p> : null}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** A placeholder that keeps a loading section's height, so nothing shifts when data arrives. */
export function Loading({ lines = 3 }: { lines?: number }) {
  return (
    <div class="loading" aria-busy="true" aria-label="Loading">
      {Array.from({ length: lines }, (_, index) => (
        <div key={index} class="skeleton" />
      ))}
    </div>
  );
}

export function Facts({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}

export function PageHeader({ title, children }: { title: ComponentChildren; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{title}</h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </header>
  );
}

export function Pager(props: { offset: number; limit: number; total: number; href: (offset: number) => string }) {
  const { offset, limit, total, href } = props;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label="Pages">
      <span class="muted">{total === 0 ? 'none' : `${offset + 1}–${last} of ${total}`}</span>
      {offset > 0 ? (
        <a href={href(Math.max(0, offset - limit))} rel="prev">
          ← Newer
        </a>
      ) : (
        <span />
      )}
      {last < total ? (
        <a href={href(offset + limit)} rel="next">
          Older →
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}
