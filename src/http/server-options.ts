import type { ServerOptions } from 'node:http';

/**
 * Node's HTTP server timeouts from the configuration: a client gets `headersTimeoutMs` to send its
 * headers (an idle new connection included), `bodyTimeoutMs` to send the whole request, and a
 * kept-alive connection is closed after `keepAliveTimeoutMs` without a request. Each ends in a 408
 * or a closed socket, so slow or idle clients cannot hold connections open. Checked every second
 * (Node's default is every 30 s, which lets a timeout run late by that much).
 */
export function serverTimeouts(http: {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
}): ServerOptions {
  return {
    headersTimeout: http.headersTimeoutMs,
    requestTimeout: Math.max(http.bodyTimeoutMs, http.headersTimeoutMs),
    keepAliveTimeout: http.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs),
  };
}
