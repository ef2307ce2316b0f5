import { type BetterAuthOptions, betterAuth } from 'better-auth';
import { genericOAuth } from 'better-auth/plugins';
import type { OAuthClient } from '../config.ts';
import type { Db } from '../db/open.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Logger } from '../observability/logger.ts';
import { hashedSessionTokens, PATHS_NEEDING_CLEAR_TOKENS } from './hashed-session-tokens.ts';

export const AUTH_BASE_PATH = '/control/v1/auth';
/** Where the console lives relative to PUBLIC_URL; links in emails land here after the action. */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 128;
const VERIFY_EXPIRES_S = 24 * 3600;
const RESET_EXPIRES_S = 3600;
const SESSION_EXPIRES_S = 7 * 24 * 3600;

export interface AuthOptions {
  db: Db;
  secret: string;
  /** Origin (and optional path) browsers use to reach this server, e.g. https://brier.example.com. */
  publicUrl: string;
  /** Extra origins allowed to call the auth endpoints with cookies (the documentation site). */
  trustedOrigins: string[];
  mailer: Mailer;
  logger: Logger;
  oidc?: (OAuthClient & { issuer: string; name: string }) | undefined;
  github?: OAuthClient | undefined;
  google?: OAuthClient | undefined;
}

/**
 * better-auth over our Kysely instance and our migrated tables (user from 0001, session, account and
 * verification from 0002). Our own middleware does rate limiting, CSRF and the error shape; better-auth
 * does accounts, passwords, email verification, sessions and OAuth/OIDC.
 *
 * Session tokens are stored hashed (hashed-session-tokens.ts): the session table holds SHA-256 of each
 * token, the cookie the token itself, signed. Reset tokens are stored hashed as well (verification).
 *
 * Account linking: a third-party sign-in joins an existing account only when the provider asserts the
 * email is verified AND the local account's email is verified (better-auth's requireLocalEmailVerified),
 * so that a password account squatted before verification can never be joined, and an unverified local
 * account cannot be taken over through an IdP. No provider is trusted by name.
 */
export function createAuth(options: AuthOptions) {
  const { mailer, logger } = options;
  const secure = options.publicUrl.startsWith('https://');

  const socialProviders: NonNullable<BetterAuthOptions['socialProviders']> = {};
  if (options.github) socialProviders.github = { ...options.github };
  if (options.google) socialProviders.google = { ...options.google };

  const oidcPlugins = options.oidc
    ? [
        genericOAuth({
          config: [
            {
              providerId: 'oidc',
              name: options.oidc.name,
              discoveryUrl: `${options.oidc.issuer}/.well-known/openid-configuration`,
              requireIdTokenVerification: true,
              clientId: options.oidc.clientId,
              clientSecret: options.oidc.clientSecret,
              scopes: ['openid', 'email', 'profile'],
              pkce: true,
            },
          ],
        }),
      ]
    : [];

  const auth = betterAuth({
    appName: 'Brier',
    baseURL: options.publicUrl,
    basePath: AUTH_BASE_PATH,
    secret: options.secret,
    database: { db: options.db.kysely, type: options.db.dialect },
    trustedOrigins: [new URL(options.publicUrl).origin, ...options.trustedOrigins],
    logger: {
      level: 'error',
      log: (level, message, ...args) => {
        const fields = { betterAuth: args.length > 0 ? args.map(String) : undefined };
        if (level === 'error') logger.error(fields, message);
        else if (level === 'warn') logger.warn(fields, message);
        else logger.debug(fields, message);
      },
    },
    telemetry: { enabled: false },
    // Our rate-limit middleware (per IP and per account, memory/Postgres/Redis) replaces better-auth's.
    rateLimit: { enabled: false },
    emailAndPassword: {
      enabled: true,
      requireEmailVerification: true,
      autoSignIn: false,
      minPasswordLength: PASSWORD_MIN,
      maxPasswordLength: PASSWORD_MAX,
      resetPasswordTokenExpiresIn: RESET_EXPIRES_S,
      revokeSessionsOnPasswordReset: true,
      sendResetPassword: async ({ user, url }) => {
        await mailer.send({
          to: user.email,
          subject: 'Reset your Brier password',
          text: `Someone asked to reset the password of your Brier account. If it was you, open this link within an hour:\n\n${url}\n\nIf not, ignore this message.`,
          link: url,
        });
      },
      onExistingUserSignUp: async ({ user }) => {
        // The sign-up answer is the same as for a new address; the owner learns of the attempt by email.
        await mailer.send({
          to: user.email,
          subject: 'Someone tried to sign up to Brier with your email',
          text: 'Your email already has a Brier account. If you forgot your password, use "reset password" on the sign-in page.',
        });
      },
    },
    emailVerification: {
      sendOnSignUp: true,
      sendOnSignIn: false,
      autoSignInAfterVerification: true,
      expiresIn: VERIFY_EXPIRES_S,
      sendVerificationEmail: async ({ user, url }) => {
        await mailer.send({
          to: user.email,
          subject: 'Verify your email for Brier',
          text: `Welcome to Brier. Open this link within 24 hours to verify your email:\n\n${url}\n\nThe link works once.`,
          link: url,
        });
      },
    },
    account: {
      accountLinking: { enabled: true, trustedProviders: [], requireLocalEmailVerified: true },
    },
    socialProviders,
    // First, so that every other plugin's init already sees the adapter that hashes session tokens.
    plugins: [hashedSessionTokens(), ...oidcPlugins],
    disabledPaths: PATHS_NEEDING_CLEAR_TOKENS,
    // Password-reset tokens and OAuth states are stored as their SHA-256 too (better-auth's own option;
    // a row stored in clear before is still found by its fallback until it expires).
    verification: { storeIdentifier: 'hashed' },
    session: { expiresIn: SESSION_EXPIRES_S, updateAge: 24 * 3600 },
    advanced: {
      useSecureCookies: secure,
      cookiePrefix: 'brier',
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', secure, path: '/' },
    },
    databaseHooks: {
      user: {
        create: {
          // Accounts created through a third-party sign-in count as verified (the rule).
          before: async (user, context) => {
            const path = context?.path ?? '';
            if (path.startsWith('/callback/') || path.startsWith('/oauth2/callback/')) {
              return { data: { ...user, emailVerified: true } };
            }
            return { data: user };
          },
        },
      },
    },
  });
  return auth;
}

export type Auth = ReturnType<typeof createAuth>;
