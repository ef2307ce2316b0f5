import { IncomingMessage } from 'node:http';
import { createMiddleware } from 'hono/factory';
import { type DomainError, fail, invalidField } from '../../lib/errors.ts';
import { checkJsonText, clip, describeProblem } from '../../lib/json-bounds.ts';
import type { AppEnv } from '../env.ts';

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;
/** JSON Lines, as upload routes take it (one JSON value per line). */
export const JSON_LINES_TYPES = ['application/jsonl', 'application/x-ndjson', 'application/json-lines'];
const FORM_TYPE = 'application/x-www-form-urlencoded';
const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface BodyGuardOptions {
  /** The byte limit of a request body. */
  maxBytes: number;
  /** The setting that raises it, named in the 413's message (absent: a fixed limit). */
  setting?: string;
  /** JSON nesting limit; the body itself is level 1. */
  maxDepth: number;
  /** Paths that also take a form body (OAuth providers that post their answer back). */
  acceptsForm?(path: string): boolean;
  /**
   * 'json-lines': the body is JSON Lines (JSON_LINES_TYPES), checked for UTF-8 here and parsed line
   * by line, with each line's bounds, by the route (src/systemone/examples.ts). Default 'json'.
   */
  format?: 'json' | 'json-lines';
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** One chunk of the body; a client that goes away mid-body ends the request as cancelled (499, never sent). */
async function read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await reader.read();
  } catch (cause) {
    throw fail('CANCELLED', 'the client went away while sending the body', { cause });
  }
}

/**
 * Reads the rest of an over-limit body without keeping it, so that a client still writing its body
 * reads a clean 413 and can reuse the connection (a client that stops reading until it has sent
 * everything would otherwise see a reset). Bounded in time by the server's request timeout
 * (BRIER_BODY_TIMEOUT_MS), which cuts a body that never ends.
 */
async function discard(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  for (let next = await read(reader); !next.done; next = await read(reader));
}

/**
 * A body JSON.parse refused, as FastAPI says it: 422 `json_invalid` with `loc` ["body", position]
 * (the character where parsing stopped; the end of the text for a truncated body).
 */
function notJson(text: string, why: string): DomainError {
  const at = /at position (\d+)/.exec(why)?.[1];
  const position = at === undefined ? text.length : Number(at);
  const msg = `JSON decode error: ${clip(why, 200)}`;
  return fail('VALIDATION', `body is not valid JSON: ${clip(why, 200)}`, {
    issues: [{ type: 'json_invalid', loc: ['body', position], msg, input: null }],
  });
}

/**
 * Every body is bounded before it is parsed: its bytes against the route's limit (413), its media
 * type (415 unless JSON), then, as one kind of refusal (422, the FastAPI detail list naming where),
 * its encoding and syntax and, in one iterative pass over the text (checkJsonText), its nesting
 * depth, forbidden keys and duplicate keys, before any schema or renderer recurses into it. The body
 * is then handed on unchanged, as a fresh request that validators and better-auth read as usual.
 */
export function bodyGuard(options: BodyGuardOptions) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const raw = c.req.raw;
    if (BODILESS.has(raw.method) || c.get('bodyGuarded')) return next();
    // On @hono/node-server the body is read from the socket's stream itself (no web stream, no new
    // Request): far cheaper per request. Elsewhere (app.request, other servers) from raw.body.
    // (raw.body is not touched on the first path: on node-server it would build the web stream.)
    const incoming = unreadIncoming(c.env);
    if (!incoming && raw.body === null) return next();
    c.set('bodyGuarded', true);
    const limit = options.maxBytes;
    const tooLarge = () =>
      fail(
        'PAYLOAD_TOO_LARGE',
        `request body is larger than ${limit} bytes (the limit${options.setting ? `, ${options.setting}` : ''})`,
      );
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    const cap = declared > limit ? 0 : limit;
    const bytes = incoming
      ? await readIncoming(incoming, cap, tooLarge)
      : await readStream(raw.body as ReadableStream<Uint8Array>, cap, tooLarge);
    if (declared > limit) throw tooLarge();
    const size = bytes.byteLength;
    const header = c.req.header('content-type');
    const type = mediaType(header);
    const form = type === FORM_TYPE && options.acceptsForm?.(c.req.path) === true;
    const lines = options.format === 'json-lines';
    if (lines && (size > 0 || type !== '') && !JSON_LINES_TYPES.includes(type)) {
      throw fail(
        'UNSUPPORTED_MEDIA_TYPE',
        `content-type: must be application/jsonl (or application/x-ndjson), one JSON object per line; got ${type ? JSON.stringify(clip(type, 80)) : 'none'}`,
      );
    }
    // A type is checked whenever one is named, body or not; no type is fine only without a body.
    if (!lines && (size > 0 || type !== '') && !form && !JSON_TYPE.test(type)) {
      throw fail(
        'UNSUPPORTED_MEDIA_TYPE',
        `content-type: must be application/json, got ${type ? JSON.stringify(clip(type, 80)) : 'none'}`,
      );
    }
    let text: string;
    try {
      text = UTF8.decode(bytes);
    } catch {
      throw invalidField([], 'json_invalid', 'is not valid JSON: it is not UTF-8');
    }
    if (size > 0 && !form && !lines) {
      try {
        JSON.parse(text);
      } catch (error) {
        throw notJson(text, (error as Error).message);
      }
      const problem = checkJsonText(text, options.maxDepth);
      if (problem) {
        const { type, msg } = describeProblem(problem, options.maxDepth);
        throw invalidField(problem.path, type, msg, problem.kind === 'depth' ? null : problem.path.at(-1));
      }
    }
    // Checked JSON goes on as plain application/json (better-auth accepts no other JSON type).
    const retype = !form && !lines && type !== '' && header !== 'application/json';
    if (incoming) {
      // The request object reads its body from `rawBody` from now on (its documented hook for a
      // body read before it); its headers are changed only when the type must be.
      (incoming as IncomingWithBody).rawBody = bytes;
      if (retype) raw.headers.set('content-type', 'application/json');
      (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    } else {
      const headers = new Headers(raw.headers);
      headers.delete('content-length');
      headers.delete('transfer-encoding');
      if (retype) headers.set('content-type', 'application/json');
      // No bytes and no type (curl -X POST): no body at all, rather than an empty string, to which
      // Request would add content-type text/plain;charset=UTF-8 that the client never sent.
      const body = size === 0 && type === '' ? null : text;
      c.req.raw = new Request(raw.url, { method: raw.method, headers, body, signal: raw.signal });
    }
    await next();
  });
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

type IncomingWithBody = IncomingMessage & { rawBody?: Buffer };

/** The node request behind `env` (@hono/node-server, HTTP/1) while its body is unread; else undefined. */
function unreadIncoming(env: unknown): IncomingWithBody | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  if (!(incoming instanceof IncomingMessage)) return undefined;
  const withBody = incoming as IncomingWithBody;
  return withBody.readableDidRead || withBody.rawBody !== undefined ? undefined : withBody;
}

/**
 * The whole body of a node request, or, past `limit` bytes, the rest read without keeping it and
 * then a 413 (see discard). A client that goes away mid-body ends the request as cancelled.
 */
function readIncoming(incoming: IncomingMessage, limit: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const done = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        over = true;
        chunks.length = 0;
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      if (over) reject(tooLarge());
      else resolve(chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, size));
    };
    const cancelled = (cause?: unknown) => {
      done();
      reject(fail('CANCELLED', 'the client went away while sending the body', { cause }));
    };
    const onError = (error: Error) => cancelled(error);
    const onClose = () => {
      if (!incoming.readableEnded) cancelled();
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
    if (incoming.readableEnded) onEnd();
  });
}

/** readIncoming for a web stream (app.request and servers other than @hono/node-server). */
async function readStream(body: ReadableStream<Uint8Array>, limit: number, tooLarge: () => Error): Promise<Buffer> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await read(reader);
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await discard(reader);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Lets a client reuse its connection only when the request body was read to the end: a refusal
 * sent before that (a 401 or 404 before the body guard) says `Connection: close`,
 * so no client writes its next request onto a socket the server is about to drop.
 */
export function connectionHygiene() {
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const incoming = (c.env as { incoming?: { readableEnded?: boolean } } | undefined)?.incoming;
    if (incoming && !BODILESS.has(c.req.method) && incoming.readableEnded === false) {
      c.res.headers.set('connection', 'close');
    }
  });
}
