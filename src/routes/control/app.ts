import type { Auth } from '../../auth/create-auth.ts';
import type { AccountDeletion } from '../../domain/account-deletion.ts';
import type { AccountService } from '../../domain/accounts.ts';
import type { KeyService } from '../../domain/keys.ts';
import type { UsageRecorder } from '../../domain/usage.ts';
import type { UsageReporter } from '../../domain/usage-report.ts';
import type { UsedLinks } from '../../domain/verification-links.ts';
import type { DecisionEngine } from '../../engines/engine.ts';
import { type ApiOptions, createApi } from '../../http/api.ts';
import { bodyGuard } from '../../http/middleware/body-guard.ts';
import { csrf } from '../../http/middleware/csrf.ts';
import type { AuthRateRule, LimiterFactory } from '../../http/middleware/rate-limit.ts';
import { siteCors } from '../../http/middleware/site-cors.ts';
import { sessionCookies } from '../../http/session-cookies.ts';
import { UPLOAD_LIMITS } from '../../systemone/examples.ts';
import { MAX_JSON_DEPTH } from '../../systemone/protocol.ts';
import type { SystemOne } from '../../systemone/serve.ts';
import type { TeachDeps } from '../teach.ts';
import { registerAccount } from './account/route.ts';
import { registerAdapters } from './adapters/route.ts';
import { registerAuth } from './auth/route.ts';
import { type MailDelivery, registerAuthProviders, type SignInProvider } from './auth-providers/route.ts';
import { registerCalibration } from './calibration/route.ts';
import { registerDistillationJobs } from './distillation-jobs/route.ts';
import { registerExamples } from './examples/route.ts';
import { registerKeys } from './keys/route.ts';
import { registerConsoleModel } from './model/route.ts';
import { registerOutcomes } from './outcomes/route.ts';
import { registerPlayground } from './playground/route.ts';
import { registerRetention } from './retention/route.ts';
import { registerStates } from './states/route.ts';
import { registerTeachers } from './teachers/route.ts';
import { registerCancelJob } from './training-jobs/cancel/route.ts';
import { registerTrainingJobs } from './training-jobs/route.ts';
import { registerUsage } from './usage/route.ts';

export interface ControlAppDeps extends Omit<ApiOptions, 'bodyLimit'> {
  auth: Auth;
  accounts: AccountService;
  keys: KeyService;
  usage: UsageRecorder;
  reporter: UsageReporter;
  deletion: AccountDeletion;
  usedLinks: UsedLinks;
  engine: DecisionEngine;
  systemOne: SystemOne;
  limiter: LimiterFactory;
  authRateRules?: Record<string, AuthRateRule> | undefined;
  /** BRIER_CONTROL_MAX_BODY_BYTES. */
  maxBodyBytes: number;
  /** This server's public URL: its origin is trusted for cookie-carrying mutations; https makes cookies Secure. */
  publicUrl: string;
  /** The documentation site's origin: trusted too, and allowed by CORS with credentials (its console sends the cookie). */
  siteOrigin: string | undefined;
  /** Third-party sign-in providers, as the console's sign-in page offers them. */
  providers?: SignInProvider[] | undefined;
  /** Where verification and reset links go (the mailer's), as the console's check-email page says. */
  mailDelivery: MailDelivery;
  /** Folder with MODEL_CARD.md and report.json of the served model, if it has one. */
  modelCardDir?: string | undefined;
  /** Labelled examples, outcomes, training jobs and adapters (absent: those routes are not served). */
  teach?: TeachDeps | undefined;
}

/** The control plane, mounted at /control/v1: accounts, sessions, keys, usage, the console's playground and model page. */
export function createControlApp(deps: ControlAppDeps) {
  // Uploads of labelled examples take JSON Lines up to their own documented limit, not the 16 KiB default.
  const upload = bodyGuard({ maxBytes: UPLOAD_LIMITS.maxBytes, maxDepth: MAX_JSON_DEPTH, format: 'json-lines' });
  const api = createApi({ guards: deps.guards, bodies: { ...deps.bodies, upload }, bodyLimit: 'control' });
  if (deps.siteOrigin) {
    api.app.use(
      '*',
      siteCors(deps.siteOrigin, { credentials: true, allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'] }),
    );
  }
  api.app.use('*', csrf([new URL(deps.publicUrl).origin, ...(deps.siteOrigin ? [deps.siteOrigin] : [])]));

  registerAuth(api, {
    auth: deps.auth,
    usedLinks: deps.usedLinks,
    limiter: deps.limiter,
    rateRules: deps.authRateRules,
    maxBodyBytes: deps.maxBodyBytes,
  });
  registerKeys(api, deps.keys, deps.teach?.retention);
  registerAuthProviders(api, deps.providers ?? [], deps.mailDelivery);
  registerPlayground(api, { systemOne: deps.systemOne, usage: deps.usage });
  registerConsoleModel(api, { engine: deps.engine, modelCardDir: deps.modelCardDir });
  registerUsage(api, { usage: deps.usage, reporter: deps.reporter });
  if (deps.teach) {
    registerExamples(api, deps.teach.examples);
    registerRetention(api, deps.teach.retention);
    registerOutcomes(api, deps.teach.outcomes);
    registerTrainingJobs(api, deps.teach);
    registerCancelJob(api, deps.teach);
    registerAdapters(api, deps.teach);
    registerCalibration(api, deps.teach.examples);
    registerTeachers(api, deps.teach.teachers);
    registerStates(api, deps.teach.distill);
    registerDistillationJobs(api, deps.teach);
  }
  const clearCookies = sessionCookies(deps.publicUrl).clear;
  registerAccount(api, { accounts: deps.accounts, deletion: deps.deletion, clearCookies });
  return api.app;
}
