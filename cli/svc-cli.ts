// The `svc` command line itself: every command, registered with clipanion (one per file under cli/commands/).
import { Builtins, Cli } from 'clipanion';
import { SVC_VERSION } from '../platform/version.ts';
import { EXIT } from './base-command.ts';
import { SvcCli } from './help-text.ts';
import { wantsColour } from './terminal-text.ts';
import { AnalyticsBehaviorCommand } from './commands/analytics/behavior.ts';
import { AnalyticsCostCommand } from './commands/analytics/cost.ts';
import { AnalyticsDispatchCommand } from './commands/analytics/dispatch.ts';
import { AnalyticsRunsCommand } from './commands/analytics/runs.ts';
import { ConfigMigrateCommand } from './commands/config/migrate.ts';
import { DbMigrateToPostgresCommand } from './commands/db/migrate-to-postgres.ts';
import { DoctorCommand } from './commands/doctor.ts';
import { GitHubAppRegisterCommand } from './commands/github-app/register.ts';
import { GitHubAppRemoveCommand } from './commands/github-app/remove.ts';
import { InitCommand } from './commands/init.ts';
import { OpsInstanceCommand } from './commands/ops/instance.ts';
import { OpsOverviewCommand } from './commands/ops/overview.ts';
import { PlanCancelCommand } from './commands/plan/cancel.ts';
import { PlanListCommand } from './commands/plan/list.ts';
import { PlanRunCommand } from './commands/plan/run.ts';
import { PlanStatusCommand } from './commands/plan/status.ts';
import { AgentListCommand } from './commands/agents/list.ts';
import { ProjectAddCommand } from './commands/project/add.ts';
import { ProjectListCommand } from './commands/project/list.ts';
import { SecretsListCommand } from './commands/secrets/list.ts';
import { SecretsRemoveCommand } from './commands/secrets/remove.ts';
import { SecretsSetCommand } from './commands/secrets/set.ts';
import { RunCommand } from './commands/run.ts';
import { LoginCommand } from './commands/login.ts';
import { RunsCancelCommand } from './commands/runs/cancel.ts';
import { RunsListCommand } from './commands/runs/list.ts';
import { RunsLogsCommand } from './commands/runs/logs.ts';
import { RunsShowCommand } from './commands/runs/show.ts';
import { RunsSteerCommand } from './commands/runs/steer.ts';
import { RunsDiffCommand } from './commands/runs/diff.ts';
import { ServeCommand } from './commands/serve.ts';
import { VersionCommand } from './commands/version.ts';
import { WorkerCommand } from './commands/worker.ts';

// A reader that closed the pipe (`svc runs logs x | head -1`) has what it wanted: end quietly.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT.ok);
    throw error;
  });

const cli = new SvcCli({
  binaryLabel: 'svc — the Agent Run Control Service',
  binaryName: 'svc',
  binaryVersion: SVC_VERSION,
  // clipanion asks the TTY prototype, not stdout, so its help is coloured even into a pipe or a file.
  enableColors: wantsColour(process.stdout),
});
for (const command of [
  Builtins.HelpCommand,
  VersionCommand,
  ServeCommand,
  WorkerCommand,
  ProjectAddCommand,
  ProjectListCommand,
  SecretsSetCommand,
  SecretsListCommand,
  SecretsRemoveCommand,
  InitCommand,
  ConfigMigrateCommand,
  RunCommand,
  AgentListCommand,
  RunsListCommand,
  RunsShowCommand,
  RunsLogsCommand,
  RunsCancelCommand,
  RunsSteerCommand,
  LoginCommand,
  RunsDiffCommand,
  PlanRunCommand,
  PlanCancelCommand,
  PlanStatusCommand,
  PlanListCommand,
  AnalyticsRunsCommand,
  AnalyticsCostCommand,
  AnalyticsDispatchCommand,
  AnalyticsBehaviorCommand,
  OpsOverviewCommand,
  OpsInstanceCommand,
  DoctorCommand,
  GitHubAppRegisterCommand,
  GitHubAppRemoveCommand,
  DbMigrateToPostgresCommand,
]) {
  cli.register(command);
}

const args = process.argv.slice(2);
const context = { ...Cli.defaultContext };
let command;
try {
  command = cli.process(args, context);
} catch (error) {
  // Unknown commands, missing arguments and invalid option values are usage errors: exit 2.
  process.stderr.write(cli.error(error as Error));
  process.exit(EXIT.usage);
}
// Exit explicitly: every part has been shut down in order by now, and native handles (the Temporal
// runtime) must not keep a finished command alive.
process.exit(await cli.run(command, context));
