// node:http and node:https as their CommonJS modules. An ESM import of node:http builds the
// module's ESM facade, which reads every export, and node:http's lazy `WebSocket` export loads
// Node's fetch client (undici): ~30 ms of a process's start and ~13 MiB that it keeps. A supervisor
// (one per run, on its critical path) never needs that client, and the API only once it calls the
// forge. So svc takes node:http from here (scripts/eslint.config.js refuses a value import of it),
// and its ESM dependencies that import node:http themselves are loaded as CommonJS (api/app.ts).
// Part of the supervisor's module graph, which runs from a stripped copy (supervisor-program.ts).

export const http = process.getBuiltinModule('node:http');

/** node:https, loaded when first asked for (TLS is not small either). */
export const https = () => process.getBuiltinModule('node:https');
