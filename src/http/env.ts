import type { KeyOwner } from '../domain/keys.ts';
import type { Consumption } from '../systemone/serve.ts';
import type { SessionAccount } from './middleware/session-auth.ts';

/** What a request consumed of the model, as the usage meter records it. */
export type Metered = Consumption;

/** Per-request values set by middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by the API-key middleware on /v1 routes. */
    owner: KeyOwner;
    /** Set by the session middleware on console routes. */
    account: SessionAccount;
    /** Set by handlers that consumed model capacity, for the usage meter. */
    metered: Metered;
    /** Set once the body guard has read and checked the body (it may be mounted on overlapping paths). */
    bodyGuarded: boolean;
  };
}
