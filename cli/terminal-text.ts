// Text for a terminal: what an agent wrote is shown, never obeyed. Its escape sequences and control
// characters come out as visible `\xNN` (an ESC that could recolour, retitle or clear the screen, a
// carriage return that could overwrite a line); svc's own colours are added after, and only on a TTY.

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `\x1b[31m` stays readable as text: every control character but newline and tab as `\xNN`. */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export type Colour = 'green' | 'red' | 'yellow' | 'cyan' | 'dim' | 'bold';

const SGR: Record<Colour, string> = { green: '32', red: '31', yellow: '33', cyan: '36', dim: '2', bold: '1' };

/** Whether a stream gets colours: a terminal, unless NO_COLOR is set (https://no-color.org). */
export function wantsColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

export function paint(text: string, colour: Colour | undefined, enabled: boolean): string {
  return enabled && colour ? `\u001b[${SGR[colour]}m${text}\u001b[0m` : text;
}

/** The colour of a run or plan-run state. */
export function stateColour(state: string): Colour | undefined {
  if (state === 'succeeded') return 'green';
  if (state === 'failed') return 'red';
  if (state === 'cancelled') return 'yellow';
  if (state === 'running') return 'cyan';
  return undefined;
}
