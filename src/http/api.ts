import { createRoute, OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import { fromZodError, SOURCE_OF_TARGET } from './errors.ts';
import type { Guards, RouteAuth } from './middleware/auth.ts';

/**
 * An OpenAPIHono whose validation failures are thrown as the one error shape (the 422 detail list),
 * `loc` starting where the value was sent: `body`, or `query` / `path` / `header` and the parameter.
 */
export function createOpenApiApp() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const input = 'data' in result ? result.data : undefined;
        throw fromZodError(result.error, input, SOURCE_OF_TARGET[result.target] ?? 'body');
      }
    },
  });
}

/** The OpenAPI security of each credential; /openapi.json registers the `bearer` and `session` schemes. */
const SECURITY: Record<RouteAuth, Record<string, string[]>[] | undefined> = {
  key: [{ bearer: [] }],
  session: [{ session: [] }],
  'key-or-session': [{ bearer: [] }, { session: [] }],
  none: undefined,
};

/**
 * The byte limit a route's body is held to: BRIER_CONTROL_MAX_BODY_BYTES, BRIER_MAX_BODY_BYTES, or
 * an upload's own limit (JSON Lines, UPLOAD_LIMITS.maxBytes), which only the sub-apps with upload
 * routes provide.
 */
export type BodyLimit = 'control' | 'inference' | 'upload';

interface Declaration {
  auth: RouteAuth;
  bodyLimit: BodyLimit | undefined;
}

const declarations = new WeakMap<object, Declaration>();

/**
 * An OpenAPI route that names its credential once: `auth` gives it its OpenAPI `security` here and
 * its guard where an Api registers it. `bodyLimit` overrides the sub-app's body limit.
 */
export function defineRoute<const R extends Omit<RouteConfig, 'security' | 'middleware'>>(
  declaration: R & { auth: RouteAuth; bodyLimit?: BodyLimit },
) {
  const { auth, bodyLimit, ...config } = declaration;
  const security = SECURITY[auth];
  const route = createRoute({ ...config, ...(security ? { security } : {}) });
  declarations.set(route, { auth, bodyLimit });
  return route;
}

export interface ApiOptions {
  guards: Guards;
  /** One body guard per limit (src/http/middleware/body-guard.ts). */
  bodies: Record<Exclude<BodyLimit, 'upload'>, MiddlewareHandler<AppEnv>> &
    Partial<Record<'upload', MiddlewareHandler<AppEnv>>>;
  /** The limit of this sub-app's bodies, unless a route declares another. */
  bodyLimit: BodyLimit;
}

/**
 * A sub-app (mounted with app.route) whose routes come from defineRoute. Registering a route puts,
 * on its path and for every method, the guard of its credential, then `before` (e.g. the usage
 * meter, which must see refusals of the body), then the body guard: a body is read only once the
 * credential is checked. The route's validators and handler come after. A public route with no
 * body (auth 'none', no request body) gets none of these. Guards and the body guard pass a request
 * they have already checked, so overlapping paths (/keys and /keys/*) check once.
 */
export function createApi(options: ApiOptions) {
  const app = createOpenApiApp();
  const guarded = new Map<string, RouteAuth>();

  function openapi<R extends RouteConfig>(
    route: R,
    handler: RouteHandler<R, AppEnv>,
    extra: { before?: MiddlewareHandler<AppEnv>[] } = {},
  ): void {
    const declared = declarations.get(route);
    if (!declared) throw new Error(`${route.method} ${route.path}: declare the route with defineRoute`);
    // A path with parameters guards everything under its static part (/keys/{id}: /keys/*), so that
    // an unknown sub-path needs the credential before it is a 404, as a known one does.
    const path = route.path.replace(/\/{.*$/, '/*');
    const before = extra.before ?? [];
    const seen = guarded.get(path);
    if (seen !== undefined && (seen !== declared.auth || before.length > 0)) {
      throw new Error(`${route.method} ${route.path}: one credential and one middleware list per path`);
    }
    if (seen === undefined) {
      guarded.set(path, declared.auth);
      const open = declared.auth === 'none' && route.request?.body === undefined && before.length === 0;
      if (!open) {
        const body = options.bodies[declared.bodyLimit ?? options.bodyLimit];
        if (!body)
          throw new Error(`${route.method} ${route.path}: this sub-app has no ${declared.bodyLimit} body guard`);
        app.use(path, options.guards[declared.auth], ...before, body);
      }
    }
    app.openapi(route, handler);
  }

  return { app, openapi, guards: options.guards, bodies: options.bodies };
}

export type Api = ReturnType<typeof createApi>;
