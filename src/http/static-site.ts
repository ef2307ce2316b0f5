import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'hono';
import type { AppEnv } from './env.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.webp': 'image/webp',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** The console talks to its own origin only; nothing it loads comes from elsewhere. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

const notBuilt = (what: string, dir: string, script: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Brier ${what}: not built</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5">
<h1>The ${what} has not been built</h1>
<p>This server serves the ${what} from <code>${dir}</code>, which does not exist yet.
Run <code>npm run build</code> (or <code>npm run ${script}</code>) in the repository, then reload this page.</p>
<p>The API (<code>/v1</code>) and the control plane (<code>/control/v1</code>) work without it.</p>
</body></html>`;

/** The docs pages carry VitePress's small inline scripts and style attributes: allowed by hash. */
function docsHeaders(html: string): Record<string, string> {
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)]
    .map(
      (m) =>
        `'sha256-${createHash('sha256')
          .update(m[1] ?? '')
          .digest('base64')}'`,
    )
    .join(' ');
  return {
    ...SECURITY_HEADERS,
    'content-security-policy': `default-src 'self'; script-src 'self' ${hashes}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'`,
  };
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

export interface StaticSiteOptions {
  /** The built site. */
  dir: string;
  /** The URL it is served at, e.g. /console. */
  basePath: string;
  /**
   * `spa`: a single-page app (the console): files from `dir`, every other path under `basePath`
   * answered with index.html (revalidated each time) so that client-side routes survive a reload.
   * `pages`: a VitePress site (the docs): one HTML file per page, clean URLs (`/docs/guide/x` is
   * `guide/x.html`), folders redirected to their trailing slash, unknown pages answered with the
   * site's 404.html and status 404.
   */
  mode: 'spa' | 'pages';
}

/**
 * The GET/HEAD handler of a built static site: hashed assets with immutable caching, a 404 for a
 * missing asset, no path outside `dir`; without a build, a 503 page says how to make one.
 */
export function staticSite(options: StaticSiteOptions): (c: Context<AppEnv>) => Promise<Response> {
  const base = options.basePath.replace(/\/+$/, '');
  const root = path.resolve(options.dir);
  const index = path.join(root, 'index.html');
  const what = options.mode === 'spa' ? 'console' : 'documentation site';
  const page = notBuilt(what, `dist${base}`, options.mode === 'spa' ? 'build:console' : 'build:docs');

  async function send(c: Context<AppEnv>, file: string, cache: string, status: 200 | 404 = 200): Promise<Response> {
    const body = await readFile(file);
    const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    const headers: Record<string, string> = {
      ...(options.mode === 'pages' && type.startsWith('text/html')
        ? docsHeaders(body.toString('utf8'))
        : SECURITY_HEADERS),
      'content-type': type,
      'cache-control': cache,
      'content-length': String(body.byteLength),
    };
    if (c.req.method === 'HEAD') return c.body(null, status, headers);
    return c.body(new Uint8Array(body), status, headers);
  }

  async function handle(c: Context<AppEnv>): Promise<Response> {
    if (!(await isFile(index))) {
      return c.html(page, 503, { 'cache-control': 'no-store', 'retry-after': '30' });
    }
    let rel: string;
    try {
      rel = decodeURIComponent(c.req.path.slice(base.length)).replace(/^\/+/, '');
    } catch {
      return c.text('bad path', 400);
    }
    if (rel.includes('\0')) return c.text('bad path', 400);
    const file = path.resolve(root, rel);
    if (rel !== '' && file.startsWith(`${root}${path.sep}`) && (await isFile(file))) {
      const hashed = rel.startsWith('assets/');
      return send(c, file, hashed ? IMMUTABLE : 'no-cache');
    }
    // A missing asset is a 404, not the page: a stale tab must not parse HTML as JavaScript.
    if (rel.startsWith('assets/') || /\.[a-z0-9]{1,8}$/i.test(rel)) {
      if (options.mode === 'pages' && rel.endsWith('.html')) return notFoundPage(c);
      return c.text('not found', 404, { 'cache-control': 'no-store' });
    }
    if (options.mode === 'spa') return send(c, index, 'no-cache');
    if (rel === '' && !c.req.path.endsWith('/')) return c.redirect(`${base}/`, 308);
    const inside = (f: string) => f === root || f.startsWith(`${root}${path.sep}`);
    const html = path.resolve(root, rel === '' || rel.endsWith('/') ? `${rel}index.html` : `${rel}.html`);
    if (inside(html) && (await isFile(html))) return send(c, html, 'no-cache');
    const folder = path.resolve(root, rel, 'index.html');
    if (!rel.endsWith('/') && inside(folder) && (await isFile(folder))) return c.redirect(`${base}/${rel}/`, 308);
    return notFoundPage(c);
  }

  async function notFoundPage(c: Context<AppEnv>): Promise<Response> {
    const file = path.join(root, '404.html');
    if (await isFile(file)) return send(c, file, 'no-cache', 404);
    return c.text('not found', 404, { 'cache-control': 'no-store' });
  }

  return handle;
}
