// Writes docs/openapi.json from the route declarations (the same document GET /openapi.json serves).
//   node scripts/write-openapi.ts
import { writeFileSync } from 'node:fs';
import { buildOpenApiDocument } from '../api/openapi.ts';
import { documentedRoutes } from '../api/server.ts';
import { SVC_VERSION } from '../platform/version.ts';

writeFileSync(
  'docs/openapi.json',
  `${JSON.stringify(buildOpenApiDocument(documentedRoutes(SVC_VERSION), SVC_VERSION), null, 2)}\n`,
);
console.log('wrote docs/openapi.json');
