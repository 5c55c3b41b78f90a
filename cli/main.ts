#!/usr/bin/env node
// The `svc` command line. One command per file under cli/commands/.
import { Builtins, Cli } from 'clipanion';
import { SVC_VERSION } from '../stack/stack.ts';
import { ServeCommand } from './commands/serve.ts';
import { WorkerCommand } from './commands/worker.ts';

const cli = new Cli({ binaryLabel: 'svc — the Agent Run Control Service', binaryName: 'svc', binaryVersion: SVC_VERSION });
cli.register(Builtins.HelpCommand);
cli.register(Builtins.VersionCommand);
cli.register(ServeCommand);
cli.register(WorkerCommand);

// Exit explicitly: every part has been shut down in order by now, and native handles (the Temporal
// runtime) must not keep a finished command alive.
process.exit(await cli.run(process.argv.slice(2)));
