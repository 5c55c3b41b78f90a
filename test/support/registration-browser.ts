// A browser on svc's GitHub App registration pages, as far as they need one: it keeps svc's
// registration cookie and sends it only on same-site navigations (SameSite=Strict: GitHub's
// redirects back to svc are cross-site, so they arrive without it), and it can submit svc's
// confirmation form from svc's own page, as a person clicking Continue does.
import type { TestResponse, TestStack } from './stack.ts';

const COOKIE = 'svc_github_app';

export class RegistrationBrowser {
  readonly #svc: Pick<TestStack, 'request'>;
  #cookie: string | undefined;

  constructor(svc: Pick<TestStack, 'request'>) {
    this.#svc = svc;
  }

  /** The registration cookie this browser holds, if any. */
  get cookie(): string | undefined {
    return this.#cookie;
  }

  /** A navigation: same-site ones (typed, or from svc's own page) carry the cookie; cross-site ones do not. */
  async open(path: string, from: 'same-site' | 'cross-site' = 'same-site'): Promise<TestResponse> {
    const headers: Record<string, string> = { 'sec-fetch-site': from === 'cross-site' ? 'cross-site' : 'same-origin' };
    if (this.#cookie && from === 'same-site') headers.cookie = `${COOKIE}=${this.#cookie}`;
    const response = await this.#svc.request('GET', path, { token: null, headers });
    const set = response.headers.get('set-cookie');
    const value = set && new RegExp(`^${COOKIE}=([^;]*);`).exec(set)?.[1];
    if (value !== null && value !== undefined) this.#cookie = value || undefined;
    return response;
  }

  /** GitHub's redirect back to svc (cross-site), then svc's confirmation form when it asks for one. */
  async returnFromGitHub(path: string): Promise<TestResponse> {
    const first = await this.open(path, 'cross-site');
    const confirmation = confirmationOf(first);
    return confirmation ? this.open(confirmation, 'same-site') : first;
  }
}

/** Where svc's confirmation form leads (its action and hidden fields as a query), or null when the page has none. */
export function confirmationOf(page: TestResponse): string | null {
  const form = /<form method="get" action="([^"]+)">(.*?)<\/form>/s.exec(page.text);
  if (!form) return null;
  const query = new URLSearchParams();
  for (const [, name, value] of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    query.set(unescapeHtml(name!), unescapeHtml(value!));
  return `${unescapeHtml(form[1]!)}?${query}`;
}

export function unescapeHtml(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!,
  );
}

/** The operator arms a registration (their token) and opens the link in a fresh browser: that browser, bound. */
export async function operatorBrowser(
  svc: TestStack,
  query = '',
): Promise<{ browser: RegistrationBrowser; page: TestResponse }> {
  const armed = await svc.request('POST', '/github-app/registration');
  if (armed.status !== 201) throw new Error(`arming answered ${armed.status}: ${armed.text}`);
  const browser = new RegistrationBrowser(svc);
  const page = await browser.open(`${armed.body.path}${query}`);
  return { browser, page };
}
