import { Command } from 'clipanion';
import type { z } from 'zod';
import type { githubAppRemovedResponse } from '../../../api/routes/github-app.schema.ts';
import { describeForgeIdentity } from '../../../core/forge-identity.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';

type Removed = z.output<typeof githubAppRemovedResponse>;

export class GitHubAppRemoveCommand extends RemoteCommand {
  static override paths = [['github-app', 'remove']];

  static override usage = Command.Usage({
    category: 'Operations',
    description: 'remove the GitHub App svc stored in its data directory (svc goes back to its token)',
    details: `
      DELETE /github-app (the operator's token). svc stops acting as the App at once, in every process sharing the data
      directory, and uses the personal access token (SVC_GIT_TOKEN) again, or nothing. The App stays on GitHub:
      uninstall or delete it there if you no longer want it. To replace it, remove it, then \`svc github-app register\`.

      An App configured in the environment (SVC_GITHUB_APP_*) is not removed here: change those settings and restart
      svc.

      \`--output json\` prints the server's answer, \`{"removed":{"appId","slug"},"identity":{...}}\`.

      Exit codes: 0 removed, 1 no App stored (404) or the App is from the environment (409), 2 usage, 3 server
      unreachable, 4 the token is refused.
    `,
    examples: [
      ['Remove the stored App', '$0 github-app remove'],
      ['Replace it', '$0 github-app remove && $0 github-app register'],
    ],
  });

  protected async run(): Promise<number> {
    const answer = await this.client.request<Removed>('DELETE', '/github-app');
    if (this.output !== 'pretty') {
      this.line(answer);
      return EXIT.ok;
    }
    const { appId, slug } = answer.removed;
    this.line(`removed the stored GitHub App${slug ? ` ${slug}` : ''}${appId ? ` (id ${appId})` : ''}`);
    this.line(`svc now acts as ${describeForgeIdentity(answer.identity)}`);
    return EXIT.ok;
  }
}
