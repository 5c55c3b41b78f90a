#!/usr/bin/env node
// The `svc` command line. A long-lived command first takes svc's Node flags (platform/node-flags.ts),
// before the rest of svc is loaded: a restart under them then loads it once.
import { applyNodeFlags } from '../platform/node-flags.ts';

applyNodeFlags(process.argv[2]);
await import('./svc-cli.ts');
