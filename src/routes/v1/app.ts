import type { UsageRecorder } from '../../domain/usage.ts';
import type { DecisionEngine } from '../../engines/engine.ts';
import { type ApiOptions, createApi } from '../../http/api.ts';
import { siteCors } from '../../http/middleware/site-cors.ts';
import type { SystemOne } from '../../systemone/serve.ts';
import type { TeachDeps } from '../teach.ts';
import { registerModels } from './models/route.ts';
import { registerSystemOne } from './systemone/route.ts';

export interface V1AppDeps extends Omit<ApiOptions, 'bodyLimit'> {
  engine: DecisionEngine;
  systemOne: SystemOne;
  usage: UsageRecorder;
  /** The documentation site's origin, allowed by CORS without credentials. */
  siteOrigin: string | undefined;
  /** Request retention (and later adapters); absent: nothing is retained. */
  teach?: TeachDeps | undefined;
}

/** The System One API, mounted at /v1: every URL under it needs an API key. */
export function createV1App(deps: V1AppDeps) {
  const api = createApi({ guards: deps.guards, bodies: deps.bodies, bodyLimit: 'inference' });
  if (deps.siteOrigin) {
    api.app.use('*', siteCors(deps.siteOrigin, { credentials: false }));
  }
  registerModels(api, deps.engine, deps.teach?.resolver);
  registerSystemOne(api, { systemOne: deps.systemOne, usage: deps.usage, retention: deps.teach?.retention });
  // Any other /v1 URL needs a key too, and has its body bounded, before it is a 404.
  api.app.use('*', deps.guards.key, deps.bodies.inference);
  return api.app;
}
