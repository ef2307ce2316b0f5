/**
 * Test fixture: a local HTTP server on 127.0.0.1 serving one generated file at `/model.gguf`,
 * with Range support and switches for the failures a download must survive.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FixtureServerOptions {
  /** File size in bytes (default 256 KiB); the content is random. */
  size?: number;
  /** Answer Range requests with 200 and the whole file, as some servers do. */
  ignoreRange?: boolean;
  /** Close the connection after this many body bytes, for the first `cutTimes` requests. */
  cutAfter?: number;
  cutTimes?: number;
  /** Send no Content-Length (chunked), so that only the body says how long the file is. */
  chunked?: boolean;
  /** Append these extra bytes to every full (200) body. */
  extraBytes?: number;
  /** Strong ETag to send (default: derived from the content). */
  etag?: string;
}

export interface FixtureServer {
  url: string;
  content: Buffer;
  sha256: string;
  /** One entry per request: its Range and If-Range headers. */
  requests: { range?: string; ifRange?: string }[];
  /** Sets the status every request gets from now on (e.g. 404, 503); undefined serves normally. */
  failWith(status: number | undefined): void;
  close(): Promise<void>;
}

/**
 * Sends `part` in pieces with pauses, then closes the connection mid-body. The pauses let the
 * client read each piece: a fetch body stream that errors drops the chunks it had queued, so
 * bytes sent in one burst just before the cut would never reach the client's file.
 */
async function cut(res: ServerResponse, part: Buffer): Promise<void> {
  const pieces = 4;
  const step = Math.ceil(part.length / pieces);
  for (let offset = 0; offset < part.length; offset += step) {
    await new Promise<void>((done) => res.write(part.subarray(offset, offset + step), () => done()));
    await sleep(15);
  }
  await sleep(30);
  res.socket?.destroy();
}

export async function startFixtureServer(options: FixtureServerOptions = {}): Promise<FixtureServer> {
  const content = randomBytes(options.size ?? 256 * 1024);
  const sha256 = createHash('sha256').update(content).digest('hex');
  const etag = options.etag ?? `"${sha256.slice(0, 16)}"`;
  const requests: FixtureServer['requests'] = [];
  let cutsLeft = options.cutAfter === undefined ? 0 : (options.cutTimes ?? 1);
  let failStatus: number | undefined;

  const send = (res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer) => {
    const allHeaders: Record<string, string> = {
      ...headers,
      etag,
      'accept-ranges': options.ignoreRange ? 'none' : 'bytes',
    };
    if (!options.chunked) allHeaders['content-length'] = String(body.length);
    res.writeHead(status, allHeaders);
    if (cutsLeft > 0 && options.cutAfter !== undefined && body.length > options.cutAfter) {
      cutsLeft -= 1;
      void cut(res, body.subarray(0, options.cutAfter));
      return;
    }
    res.end(body);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined });
    if (failStatus !== undefined) {
      res.writeHead(failStatus, { 'content-type': 'text/plain' }).end('failing on purpose');
      return;
    }
    if (req.url !== '/model.gguf') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const full = options.extraBytes ? Buffer.concat([content, Buffer.alloc(options.extraBytes, 7)]) : content;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (range === null || options.ignoreRange || (ifRange !== undefined && ifRange !== etag)) {
      send(res, 200, { 'content-type': 'application/octet-stream' }, full);
      return;
    }
    const start = Number(range[1]);
    if (start >= content.length) {
      res.writeHead(416, { 'content-range': `bytes */${content.length}` }).end();
      return;
    }
    send(
      res,
      206,
      { 'content-range': `bytes ${start}-${content.length - 1}/${content.length}` },
      content.subarray(start),
    );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/model.gguf`,
    content,
    sha256,
    requests,
    failWith(status) {
      failStatus = status;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
