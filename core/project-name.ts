// How people name a project: `owner/repo`, from its git URL (the dashboard and the CLI alike).
/** `owner/repo` from a project's git URL (https, ssh or scp form), else the URL itself. */
export function projectName(gitUrl: string): string {
  const match = /[/:]([^/:]+\/[^/]+?)(?:\.git)?\/?$/.exec(gitUrl);
  return match ? match[1]! : gitUrl;
}
