import type { KeyOwner } from '../domain/keys.ts';
import type { Consumption } from '../systemone/serve.ts';
import type { SessionAccount } from './middleware/auth.ts';

/** What a request consumed of the model, as the usage meter records it. */
export type Metered = Consumption;

/** Per-request values set by middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by the API-key guard (routes declared with auth 'key', or 'key-or-session' and a key). */
    owner?: KeyOwner;
    /** Set by the session guard (routes declared with auth 'session', or 'key-or-session' and a cookie). */
    account: SessionAccount;
    /** Set by handlers that consumed model capacity, for the usage meter. */
    metered: Metered;
    /** Set once the body guard has read and checked the body (it may be mounted on overlapping paths). */
    bodyGuarded: boolean;
    /** The client's address for rate limits (src/http/middleware/client-address.ts); unset: the socket's. */
    clientIp?: string;
  };
}
