#!/usr/bin/env node
// The `svc` command line. Before the rest of svc is loaded: Node's compile cache, so svc's modules
// come stripped and compiled from disk (platform/compile-cache.ts), and, for a long-lived command,
// svc's Node flags (platform/node-flags.ts): a restart under them then loads svc once.
import { enableSvcCompileCache } from '../platform/compile-cache.ts';
import { applyNodeFlags } from '../platform/node-flags.ts';

enableSvcCompileCache();
applyNodeFlags(process.argv[2]);
await import('./svc-cli.ts');
