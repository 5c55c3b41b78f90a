import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, Option, UsageError } from 'clipanion';
import type { z } from 'zod';
import type { setupCodeResponse } from '../../api/routes/ops.schema.ts';
import { dataPaths } from '../../platform/config.ts';
import { EXIT, outputOption, RemoteCommand } from '../base-command.ts';
import { SvcClient } from '../client/http.ts';
import { readClientConfig, resolveClientSettings, writeClientConfig } from '../client/settings.ts';

type SetupCode = z.output<typeof setupCodeResponse>;

export class LoginCommand extends RemoteCommand {
  static override paths = [['login']];

  static override usage = Command.Usage({
    category: 'Getting started',
    description: 'save where the server is and its token, and print a fresh one-time dashboard sign-in link',
    details: `
      Takes the operator token from \`--token\`, else SVC_API_TOKEN, else the server's data directory (\`--data-dir\`,
      default SVC_DATA_DIR or .svc-data: the \`operator-token\` file \`svc serve\` wrote), else the client config. Asks
      the server for a fresh sign-in code (POST /setup-codes: the token must be the operator's), then saves the URL and
      the token to the client config (SVC_CLIENT_CONFIG or ~/.svc/client.json, readable by you only), so later commands
      need neither \`--url\` nor \`--token\`.

      Prints the link: open it once, within 10 minutes, to sign a browser in to the dashboard. A new \`svc login\`
      replaces a spent or lost link; the server need not restart. \`--output json\` prints
      \`{"url","config","signInLink","expiresAt"}\`.

      Exit codes: 0 signed in, 2 no token found, 3 server unreachable, 4 the token is refused.
    `,
    examples: [
      ['On the machine that runs svc serve', '$0 login'],
      ['A server elsewhere', '$0 login --url https://svc.example.com --token "$SVC_TOKEN"'],
      ['A local server with its own data directory', '$0 login --url http://127.0.0.1:8090 --data-dir /srv/svc-data'],
    ],
  });

  override output = outputOption('pretty');
  dataDir = Option.String('--data-dir', { description: "the server's data directory, for its operator-token file" });

  protected async run(): Promise<number> {
    const settings = resolveClientSettings({ url: this.url, token: this.token ?? this.#localToken() });
    if (!settings.token)
      throw new UsageError(
        'no operator token: pass --token, set SVC_API_TOKEN, or run this where `svc serve` keeps its data (--data-dir)',
      );
    const client = new SvcClient(settings);
    const code = await client.request<SetupCode>('POST', '/setup-codes');
    const config = writeClientConfig({ ...readClientConfig(), url: settings.baseUrl, token: settings.token });
    const signInLink = code.url ?? `${settings.baseUrl}${code.path}`;
    if (this.output !== 'pretty') {
      this.line({ url: settings.baseUrl, config, signInLink, expiresAt: code.expiresAt });
      return EXIT.ok;
    }
    this.line(`logged in to ${settings.baseUrl} (saved to ${config})`);
    this.line(`sign in a browser (open once, within 10 minutes): ${signInLink}`);
    return EXIT.ok;
  }

  /** SVC_API_TOKEN, else the token `svc serve` keeps in its data directory, if this user can read it. */
  #localToken(): string | undefined {
    if (process.env.SVC_API_TOKEN) return process.env.SVC_API_TOKEN;
    const path = dataPaths.operatorToken(resolve(this.dataDir ?? (process.env.SVC_DATA_DIR || '.svc-data')));
    try {
      return readFileSync(path, 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  }
}
