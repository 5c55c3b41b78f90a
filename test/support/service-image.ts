// A service image for the services tests, built without any registry: svc's agent image (which
// scripts/test builds) with a small Node HTTP server as its command. The server prints its
// capabilities and no_new_privs, answers `answer=$GREETING`, and listens on 127.0.0.1:$PORT.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_AGENT_IMAGE } from '../../platform/sandbox-settings.ts';

export const SERVICE_IMAGE = 'localhost/svc-test-service:1';

const SERVER = `
const status = require('node:fs').readFileSync('/proc/self/status', 'utf8').split('\\n');
for (const line of status) if (/^(CapEff|NoNewPrivs):/.test(line)) console.log(line.replace(/\\s+/, ' '));
console.log('uid=' + process.getuid());
const port = Number(process.env.PORT || 8080);
require('node:http')
  .createServer((request, response) => response.end('answer=' + process.env.GREETING + '\\n'))
  .listen(port, '127.0.0.1', () => console.log('listening on ' + port));
`;

/** Builds SERVICE_IMAGE from the agent image (quick: one layer, no package). */
export function buildServiceImage(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-service-image-'));
  try {
    writeFileSync(join(dir, 'server.js'), SERVER);
    writeFileSync(
      join(dir, 'Containerfile'),
      `FROM ${DEFAULT_AGENT_IMAGE}\nCOPY server.js /opt/service/server.js\nCMD ["node", "/opt/service/server.js"]\n`,
    );
    execFileSync('podman', ['build', '--quiet', '--runtime', 'runc', '-t', SERVICE_IMAGE, dir], {
      env: { ...process.env, CONTAINERS_CONF: resolve('sandbox/backends/container/image/containers.conf') },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return SERVICE_IMAGE;
}
