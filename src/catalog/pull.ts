/**
 * Downloads a model file: streamed to `<file>.partial`, resumed with an HTTP Range request when a
 * partial file exists, verified (size, sha256) when the expected values are known, then renamed
 * into place. Never holds the file in memory.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makePrivateDir } from '../lib/private-files.ts';
import type { GgufCatalogEntry } from './catalog.ts';
import { PARTIAL_SUFFIX } from './catalog.ts';

export interface PullProgress {
  /** `download`: bytes on disk; `verify`: bytes hashed so far. */
  phase: 'download' | 'verify';
  bytes: number;
  /** The full file size, when known. */
  totalBytes?: number;
  /** Bytes already on disk when this request started (counted in `bytes`, not fetched now). */
  resumedFrom: number;
}

export interface PullOptions {
  /** The catalog entry: source URL, file name, expected size and sha256. */
  entry?: GgufCatalogEntry;
  /** Source URL; overrides `entry.url` (mirrors, tests). Required without an entry. */
  url?: string;
  /** Overrides `entry.fileName`; without either, the last segment of the URL's path. */
  fileName?: string;
  /** Overrides `entry.sizeBytes`. */
  sizeBytes?: number;
  /** Overrides `entry.sha256` (hex, any case). */
  sha256?: string;
  destDir: string;
  fetch?: typeof fetch;
  onProgress?: (progress: PullProgress) => void;
  /** Aborting keeps the partial file, so that the next pull resumes. */
  signal?: AbortSignal;
  /** Further attempts after a dropped connection or a 5xx/429, each resuming (default 4). */
  retries?: number;
  /** Wait before the first retry, doubled each time (default 1000 ms). */
  retryDelayMs?: number;
  /** Told before each retry (attempt counts from 1), e.g. to print why the bar paused. */
  onRetry?: (error: PullError, attempt: number, delayMs: number) => void;
}

export interface PullResult {
  path: string;
  /** `resumed`: some bytes came from an earlier, interrupted download. */
  status: 'downloaded' | 'resumed' | 'already-present';
  bytes: number;
  /** The file's sha256; undefined only for an already-present file with no expected sha256 (not hashed). */
  sha256?: string;
  /** Which checks were made against expected values (false: no expected value known). */
  verified: { size: boolean; sha256: boolean };
  /** True when a file was already at `path` but failed verification and was replaced. */
  replaced: boolean;
}

export type PullErrorCode =
  | 'BAD_INPUT'
  | 'HTTP'
  | 'BAD_RESPONSE'
  | 'INTERRUPTED'
  | 'SIZE_MISMATCH'
  | 'CHECKSUM_MISMATCH';

export interface PullError extends Error {
  code: PullErrorCode;
  /** Worth another attempt (resuming): dropped connections, 5xx, 429. */
  retryable: boolean;
}

export function isPullError(error: unknown): error is PullError {
  return error instanceof Error && typeof (error as Partial<PullError>).code === 'string' && 'retryable' in error;
}

function pullError(code: PullErrorCode, message: string, retryable = false, cause?: unknown): PullError {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code, retryable });
}

/** Next to the partial file: the validator (ETag or Last-Modified) of the response it came from. */
const META_SUFFIX = '.partial.json';

interface Target {
  url: string;
  path: string;
  partial: string;
  meta: string;
  sizeBytes?: number;
  sha256?: string;
}

export async function pullModel(options: PullOptions): Promise<PullResult> {
  const target = resolveTarget(options);
  const fetchFn = options.fetch ?? fetch;
  const report = options.onProgress ?? (() => {});
  const signal = options.signal;
  signal?.throwIfAborted();

  // Like the database's folder: created owner-only (0700), so the data dir it may create is not listable by others.
  makePrivateDir(options.destDir);

  let replaced = false;
  const existing = await sizeOf(target.path);
  if (existing !== undefined) {
    const check = await checkExisting(target, existing, report, signal);
    if (check.ok) {
      return {
        path: target.path,
        status: 'already-present',
        bytes: existing,
        sha256: check.sha256,
        verified: { size: target.sizeBytes !== undefined, sha256: target.sha256 !== undefined },
        replaced: false,
      };
    }
    // A file that fails verification is replaced only once a good download is in hand (rename below).
    replaced = true;
  }

  const retries = options.retries ?? 4;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  let resumed = false;
  for (let attempt = 0; ; attempt++) {
    try {
      resumed = (await downloadToPartial(target, fetchFn, report, signal)) || resumed;
      break;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!isPullError(error) || !error.retryable || attempt >= retries) throw error;
      const delayMs = retryDelayMs * 2 ** attempt;
      options.onRetry?.(error, attempt + 1, delayMs);
      await sleep(delayMs, undefined, { signal }).catch((sleepError: unknown) => {
        throw signal?.aborted ? signal.reason : sleepError;
      });
    }
  }

  const bytes = (await sizeOf(target.partial)) ?? 0;
  if (target.sizeBytes !== undefined && bytes !== target.sizeBytes) {
    await discardPartial(target);
    throw pullError(
      'SIZE_MISMATCH',
      `size mismatch for ${basename(target.path)}: expected ${target.sizeBytes} bytes, got ${bytes} ` +
        `from ${target.url}; the partial download was deleted`,
    );
  }
  const sha256 = await hashFile(target.partial, bytes, report, signal);
  if (target.sha256 !== undefined && sha256 !== target.sha256) {
    await discardPartial(target);
    throw pullError(
      'CHECKSUM_MISMATCH',
      `checksum mismatch for ${basename(target.path)}: expected sha256 ${target.sha256}, got ${sha256} ` +
        `(${bytes} bytes from ${target.url}); the partial download was deleted. Run the pull again; ` +
        'if it fails the same way, the upstream file has changed or the mirror serves a different file',
    );
  }
  await rename(target.partial, target.path);
  await rm(target.meta, { force: true });
  return {
    path: target.path,
    status: resumed ? 'resumed' : 'downloaded',
    bytes,
    sha256,
    verified: { size: target.sizeBytes !== undefined, sha256: target.sha256 !== undefined },
    replaced,
  };
}

function resolveTarget(options: PullOptions): Target {
  const url = options.url ?? options.entry?.url;
  if (url === undefined) throw pullError('BAD_INPUT', 'pullModel needs an entry or a url');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw pullError('BAD_INPUT', `not a valid URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw pullError('BAD_INPUT', `only http(s) URLs can be pulled: ${url}`);
  }
  const fileName = options.fileName ?? options.entry?.fileName ?? decodeURIComponent(basename(parsed.pathname));
  if (fileName === '' || fileName === '.' || fileName === '..' || /[/\\]/.test(fileName)) {
    throw pullError('BAD_INPUT', `cannot take a file name from ${url}; give one`);
  }
  const sizeBytes = options.sizeBytes ?? options.entry?.sizeBytes;
  if (sizeBytes !== undefined && (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0)) {
    throw pullError('BAD_INPUT', `expected size must be a whole number of bytes, got ${sizeBytes}`);
  }
  const sha256 = (options.sha256 ?? options.entry?.sha256)?.toLowerCase();
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) {
    throw pullError('BAD_INPUT', `expected sha256 must be 64 hex digits, got ${sha256}`);
  }
  const path = join(options.destDir, fileName);
  return { url, path, partial: path + PARTIAL_SUFFIX, meta: path + META_SUFFIX, sizeBytes, sha256 };
}

async function checkExisting(
  target: Target,
  size: number,
  report: (p: PullProgress) => void,
  signal: AbortSignal | undefined,
): Promise<{ ok: boolean; sha256?: string }> {
  if (target.sizeBytes !== undefined && size !== target.sizeBytes) return { ok: false };
  if (target.sha256 === undefined) return { ok: true };
  const sha256 = await hashFile(target.path, size, report, signal);
  return { ok: sha256 === target.sha256, sha256 };
}

/**
 * One HTTP request that brings the partial file to its full length. Returns whether it resumed
 * (appended to bytes from an earlier request). Throws a retryable INTERRUPTED error when the
 * connection drops; the bytes received so far stay on disk.
 */
async function downloadToPartial(
  target: Target,
  fetchFn: typeof fetch,
  report: (p: PullProgress) => void,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  // At most one restart from zero (server ignored or refused the range); a second is a bad server.
  for (let restarts = 0; ; restarts++) {
    let start = (await sizeOf(target.partial)) ?? 0;
    if (target.sizeBytes !== undefined && start > target.sizeBytes) {
      await discardPartial(target);
      start = 0;
    }
    if (target.sizeBytes !== undefined && start === target.sizeBytes && start > 0) return true;

    const headers: Record<string, string> = { 'accept-encoding': 'identity' };
    if (start > 0) {
      headers.range = `bytes=${start}-`;
      const validator = await readValidator(target);
      if (validator !== undefined) headers['if-range'] = validator;
    }

    let response: Response;
    try {
      response = await fetchFn(target.url, { headers, signal, redirect: 'follow' });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw pullError('INTERRUPTED', `could not reach ${target.url}: ${describe(error)}`, true, error);
    }

    let append: boolean;
    let total: number | undefined;
    if (response.status === 206) {
      const range = parseContentRange(response.headers.get('content-range'));
      if (range === undefined || range.start !== start) {
        await response.body?.cancel();
        if (restarts > 0 || start === 0) {
          throw pullError('BAD_RESPONSE', `${target.url} answered a range request with the wrong range`);
        }
        await discardPartial(target);
        continue;
      }
      append = start > 0;
      total = range.total;
    } else if (response.status === 200) {
      // A server that ignores Range (or whose file changed, per If-Range) sends it all: start over.
      append = false;
      start = 0;
      total = contentLength(response);
    } else if (response.status === 416 && start > 0) {
      await response.body?.cancel();
      const range = parseContentRange(response.headers.get('content-range'));
      if (range?.total === start) return true; // the partial file is already complete
      if (restarts > 0) throw pullError('BAD_RESPONSE', `${target.url} refused every range`);
      await discardPartial(target);
      continue;
    } else {
      await response.body?.cancel();
      const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
      const hint =
        response.status === 401 || response.status === 403
          ? ' (the repository may be gated or private: check the URL)'
          : response.status === 404
            ? ' (check the URL; a mirror given with --url must serve the same file)'
            : '';
      throw pullError(
        'HTTP',
        `download failed: HTTP ${response.status} ${response.statusText} from ${target.url}${hint}`,
        retryable,
      );
    }

    if (target.sizeBytes !== undefined && total !== undefined && total !== target.sizeBytes) {
      await response.body?.cancel();
      await discardPartial(target);
      throw pullError(
        'SIZE_MISMATCH',
        `size mismatch for ${basename(target.path)}: expected ${target.sizeBytes} bytes, ` +
          `${target.url} serves ${total}; nothing was kept`,
      );
    }
    await writeValidator(target, response);
    await streamBody(response, target, append, start, total, report, signal);
    return append;
  }
}

async function streamBody(
  response: Response,
  target: Target,
  append: boolean,
  start: number,
  total: number | undefined,
  report: (p: PullProgress) => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  const body = response.body;
  if (body === null) throw pullError('BAD_RESPONSE', `${target.url} sent no body`);
  const reader = body.getReader();
  const file = await open(target.partial, append ? 'a' : 'w');
  let written = start;
  try {
    report({ phase: 'download', bytes: written, totalBytes: total, resumedFrom: start });
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        throw pullError(
          'INTERRUPTED',
          `download interrupted after ${written}${total === undefined ? '' : ` of ${total}`} bytes ` +
            `(${describe(error)}); run the pull again to resume`,
          true,
          error,
        );
      }
      if (chunk.done) break;
      const limit = target.sizeBytes ?? total;
      if (limit !== undefined && written + chunk.value.byteLength > limit) {
        await reader.cancel();
        await file.close();
        await discardPartial(target);
        throw pullError(
          'SIZE_MISMATCH',
          `size mismatch for ${basename(target.path)}: expected ${limit} bytes, ` +
            `${target.url} sent more; the partial download was deleted`,
        );
      }
      await file.write(chunk.value);
      written += chunk.value.byteLength;
      report({ phase: 'download', bytes: written, totalBytes: total, resumedFrom: start });
    }
    await file.sync();
  } finally {
    reader.releaseLock();
    await file.close().catch(() => {});
  }
  if (total !== undefined && written < total) {
    throw pullError(
      'INTERRUPTED',
      `download interrupted after ${written} of ${total} bytes; run the pull again to resume`,
      true,
    );
  }
}

async function hashFile(
  path: string,
  size: number,
  report: (p: PullProgress) => void,
  signal: AbortSignal | undefined,
): Promise<string> {
  const hash = createHash('sha256');
  let done = 0;
  report({ phase: 'verify', bytes: 0, totalBytes: size, resumedFrom: 0 });
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20, signal })) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    done += bytes.byteLength;
    report({ phase: 'verify', bytes: done, totalBytes: size, resumedFrom: 0 });
  }
  return hash.digest('hex');
}

function parseContentRange(value: string | null): { start: number; end?: number; total?: number } | undefined {
  if (value === null) return undefined;
  const unsatisfied = /^bytes \*\/(\d+)$/i.exec(value.trim());
  if (unsatisfied !== null) return { start: -1, total: Number(unsatisfied[1]) };
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/i.exec(value.trim());
  if (match === null) return undefined;
  return {
    start: Number(match[1]),
    end: Number(match[2]),
    total: match[3] === '*' ? undefined : Number(match[3]),
  };
}

function contentLength(response: Response): number | undefined {
  const value = response.headers.get('content-length');
  if (value === null || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

/** A strong ETag, else Last-Modified: what If-Range accepts to resume only the same file. */
async function writeValidator(target: Target, response: Response): Promise<void> {
  const etag = response.headers.get('etag');
  const validator =
    etag !== null && !etag.startsWith('W/') ? etag : (response.headers.get('last-modified') ?? undefined);
  if (validator === undefined) await rm(target.meta, { force: true });
  else await writeFile(target.meta, JSON.stringify({ validator }));
}

async function readValidator(target: Target): Promise<string | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(target.meta, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'validator' in parsed) {
      const validator = (parsed as { validator: unknown }).validator;
      if (typeof validator === 'string' && validator !== '') return validator;
    }
  } catch {
    // no or unreadable sidecar: resume without a validator (the checksum, when known, still guards)
  }
  return undefined;
}

async function discardPartial(target: Target): Promise<void> {
  await rm(target.partial, { force: true });
  await rm(target.meta, { force: true });
}

async function sizeOf(path: string): Promise<number | undefined> {
  try {
    const stats = await stat(path);
    return stats.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return error.message + cause;
}
