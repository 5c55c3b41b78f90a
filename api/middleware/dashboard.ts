// Serves the web dashboard (web/dist, built by the install step) next to the API, without ever
// shadowing it. The single-page fallback answers only a GET or HEAD that (1) no route matched,
// (2) lies outside every API namespace (the first path segment of each route, /extensions/* and
// the preview proxy's among them) and (3) asks for HTML, as a browser's navigation does. Anything
// else keeps the API's JSON 404. The built files are read into memory once, gzipped once.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Middleware } from 'koa';

interface Asset {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  etag: string;
  cacheControl: string;
}

export interface DashboardFiles {
  index: Asset;
  /** By URL path: /assets/index-abc123.js, /favicon.svg. */
  files: Map<string, Asset>;
}

/** Namespaces no route declares yet but the API owns: the preview proxy's path mode (/p/<runId>/). */
const RESERVED_NAMESPACES = ['p', 'preview', 'extensions'];

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** The page's policy: its own scripts and styles only, API calls to this origin, never framed. */
const HTML_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

function asset(path: string, body: Buffer): Asset {
  const type = TYPES[extname(path)] ?? 'application/octet-stream';
  const compressible = /^(text\/|image\/svg|application\/json)/.test(type);
  const gzip = compressible && body.length > 512 ? gzipSync(body, { level: 9 }) : null;
  return {
    body,
    gzip: gzip && gzip.length < body.length ? gzip : null,
    type,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    // Vite puts a content hash in every name under assets/: those never change.
    cacheControl: path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** The built dashboard, or null when web/dist has no index.html (not built). */
export async function loadDashboard(dir: string): Promise<DashboardFiles | null> {
  const index = await readFile(join(dir, 'index.html')).catch(() => null);
  if (!index) return null;
  const files = new Map<string, Asset>();
  for (const file of await listFiles(dir)) {
    const urlPath = `/${relative(dir, file).split(sep).join('/')}`;
    if (urlPath === '/index.html' || urlPath.split('/').some((part) => part.startsWith('.'))) continue;
    files.set(urlPath, asset(urlPath, await readFile(file)));
  }
  return { index: asset('/index.html', index), files };
}

/** The first segment of every route path: /runs/{id} → runs. */
export function apiNamespaces(paths: string[]): Set<string> {
  return new Set([...paths.map((path) => path.split('/')[1] ?? ''), ...RESERVED_NAMESPACES]);
}

function send(ctx: Context, file: Asset, extraHeaders: Record<string, string> = {}): void {
  ctx.set({
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': file.cacheControl,
    ETag: file.etag,
    Vary: 'Accept-Encoding',
  });
  ctx.set(extraHeaders);
  if (ctx.get('If-None-Match') === file.etag) {
    ctx.status = 304;
    ctx.body = '';
    return;
  }
  ctx.type = file.type;
  const gzip = file.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  if (gzip) ctx.set('Content-Encoding', 'gzip');
  ctx.status = 200;
  ctx.body = gzip ? file.gzip : file.body;
}

export function dashboard(files: DashboardFiles | null, namespaces: Set<string>): Middleware {
  return async (ctx, next) => {
    await next();
    if (!files || ctx.status !== 404 || (ctx.body !== undefined && ctx.body !== null)) return;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return;
    if (namespaces.has(ctx.path.split('/')[1] ?? '')) return;
    const file = files.files.get(ctx.path);
    if (file) return send(ctx, file);
    if (extname(ctx.path) || !ctx.get('Accept').includes('text/html')) return;
    send(ctx, files.index, HTML_HEADERS);
  };
}
