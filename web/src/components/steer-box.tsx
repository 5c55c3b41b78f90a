// Steering a running run: a message goes to its inbox (POST /runs/{id}/steer) and shows `sent`
// until the agent claims it, which the run's own `steer.delivered` event says.
import { useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import type { InboxMessage, RunEvent, SteerResult } from '../api/types.ts';
import { ErrorBox } from './ui.tsx';

const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

export function SteerBox({ runId, events, open }: { runId: string; events: RunEvent[]; open: boolean }) {
  const [body, setBody] = useState('');
  const [priority, setPriority] = useState<(typeof PRIORITIES)[number]>('normal');
  const [sent, setSent] = useState<InboxMessage[]>([]);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const delivered = new Set(
    events
      .filter((event) => event.kind === 'steer.delivered')
      .map((event) => (event.payload as { messageId?: string } | null)?.messageId),
  );
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!body.trim()) return;
    setBusy(true);
    setError(undefined);
    try {
      const result = await sendJson<SteerResult>('POST', `/runs/${encodeURIComponent(runId)}/steer`, {
        body,
        priority,
      });
      setSent((previous) => [...previous, result.message]);
      setBody('');
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card" aria-labelledby="steer-title">
      <h2 id="steer-title">Steer</h2>
      {open ? (
        <form class="stack" onSubmit={submit}>
          <label for="steer-body" class="visually-hidden">
            Message to the agent
          </label>
          <textarea
            id="steer-body"
            rows={3}
            placeholder="Tell the agent something while it works…"
            value={body}
            onInput={(event) => setBody(event.currentTarget.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) void submit(event);
            }}
          />
          <div class="row">
            <label>
              Priority{' '}
              <select value={priority} onChange={(event) => setPriority(event.currentTarget.value as typeof priority)}>
                {PRIORITIES.map((value) => (
                  <option key={value}>{value}</option>
                ))}
              </select>
            </label>
            <button type="submit" class="primary" disabled={busy || !body.trim()}>
              Send
            </button>
          </div>
        </form>
      ) : (
        <p class="muted">The run is not running: there is no agent to steer.</p>
      )}
      <ErrorBox error={error} title="Not sent" />
      {sent.length ? (
        <ul class="steer-list" aria-label="Sent messages">
          {sent.map((message) => {
            const state = delivered.has(message.id) ? 'delivered' : message.state === 'unread' ? 'sent' : message.state;
            return (
              <li key={message.id} data-message-id={message.id} data-delivery={state}>
                <span class={`badge tone-${state === 'delivered' ? 'good' : state === 'failed' ? 'bad' : 'neutral'}`}>
                  {state}
                </span>{' '}
                {message.body}
              </li>
            );
          })}
        </ul>
      ) : null}
    </section>
  );
}
