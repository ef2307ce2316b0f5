import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env.ts';

/** The socket's peer address, or 'unknown' (app.request without a socket). */
function socketAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `::ffff:10.0.0.1` and `10.0.0.1` are one address. */
const plain = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '').toLowerCase();

/** Addresses and CIDR ranges (`10.0.0.7`, `10.0.0.0/8`, `fd00::/8`) as one set; throws on anything else. */
export function trustedSet(entries: readonly string[]): { has(address: string): boolean } {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    if (family === 0) throw new Error(`${entry} is not an IP address or range`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else {
      const bits = Number(prefix);
      if (!Number.isInteger(bits) || bits < 0 || bits > (family === 4 ? 32 : 128)) {
        throw new Error(`${entry} has a bad prefix length`);
      }
      list.addSubnet(address, bits, type);
    }
  }
  return {
    has(address) {
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * The client's address for rate limits. The socket's peer, unless that peer is trusted
 * (BRIER_TRUSTED_PROXIES: the load balancers in front of the gateways): then the right-most address
 * of X-Forwarded-For that is not itself a trusted proxy, the one the last trusted hop saw. Anyone
 * else's X-Forwarded-For is ignored, since a client can write anything there.
 */
export function resolveClientAddress(
  socket: string,
  forwardedFor: string | undefined,
  trusted: { has(address: string): boolean },
): string {
  let address = plain(socket);
  if (!forwardedFor || !trusted.has(address)) return address;
  const hops = forwardedFor.split(',').map((h) => plain(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] ?? '';
    if (isIP(hop) === 0) return address;
    address = hop;
    if (!trusted.has(hop)) return hop;
  }
  return address;
}

/** Sets `clientIp` for the rate limiters (src/http/middleware/rate-limit.ts reads it). */
export const clientAddress = (trustedProxies: readonly string[]) => {
  const trusted = trustedSet(trustedProxies);
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set('clientIp', resolveClientAddress(socketAddress(c), c.req.header('x-forwarded-for'), trusted));
    await next();
  });
};
