import { Command, Option } from 'clipanion';
import type { z } from 'zod';
import type { githubAppRegistrationResponse } from '../../../api/routes/github-app.schema.ts';
import { EXIT, outputOption, RemoteCommand } from '../../base-command.ts';

type Registration = z.output<typeof githubAppRegistrationResponse>;

export class GitHubAppRegisterCommand extends RemoteCommand {
  static override paths = [['github-app', 'register']];

  static override usage = Command.Usage({
    category: 'Operations',
    description: 'print a one-time link that registers svc as a GitHub App from your browser',
    details: `
      Asks the server to arm a registration (POST /github-app/registration: the token must be the operator's) and prints
      the link. Open it once, within 10 minutes, in the browser you will use on GitHub: it binds that browser (an
      HttpOnly cookie, for an hour), shows the form that creates svc's App on GitHub, and only that browser can then
      store the App and activate its installation. A visitor without such a link gets no form, stores nothing and
      activates nothing.

      \`--org\` makes the App an organization's; \`--name\` names it (default svc-forge-<6 chars>, at most 34
      characters). With SVC_APP_CRED_STORE=data-dir svc keeps the App in its data directory; otherwise the page shows
      its credentials once. A stored App is never replaced by a registration: \`svc github-app remove\` first. A new
      link replaces an unopened one.

      \`--output json\` prints \`{"link","expiresAt"}\`.

      Exit codes: 0 armed, 2 usage, 3 server unreachable, 4 the token is refused, 1 the registration is off (404:
      SVC_GITHUB_APP_REGISTRATION, public mode, or an App already acts) or the server has no SVC_PUBLIC_URL (409:
      the App's manifest names it).
    `,
    examples: [
      ['A link for your own account', '$0 github-app register'],
      ['An App owned by an organization', '$0 github-app register --org acme --name "acme svc"'],
      ['The link alone, for a script', '$0 github-app register --output json | jq -r .link'],
    ],
  });

  override output = outputOption('pretty');
  org = Option.String('--org', { description: 'the GitHub organization that will own the App (default: you)' });
  name = Option.String('--name', { description: 'the App name (default svc-forge-<6 chars>)' });

  protected async run(): Promise<number> {
    const armed = await this.client.request<Registration>('POST', '/github-app/registration');
    const link = new URL(armed.url);
    if (this.org) link.searchParams.set('org', this.org);
    if (this.name) link.searchParams.set('name', this.name);
    if (this.output !== 'pretty') {
      this.line({ link: link.href, expiresAt: armed.expiresAt });
      return EXIT.ok;
    }
    this.line(`register svc as a GitHub App (open once, within 10 minutes, in your browser): ${link.href}`);
    return EXIT.ok;
  }
}
