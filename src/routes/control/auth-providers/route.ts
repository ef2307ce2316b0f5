import { z } from '@hono/zod-openapi';
import { type Api, defineRoute } from '../../../http/api.ts';

export interface SignInProvider {
  /** The id to pass as `provider` to POST /control/v1/auth/sign-in/social. */
  id: string;
  /** What to show on the button. */
  name: string;
}

export const AuthProviders = z
  .object({
    email_password: z.boolean().openapi({ description: 'Email and password sign-up and sign-in are available.' }),
    providers: z.array(z.object({ id: z.string(), name: z.string() })).openapi({
      description: 'Third-party sign-in providers configured on this server.',
    }),
    mail_delivery: z.enum(['smtp', 'log']).openapi({
      description:
        'Where verification and password-reset links go: smtp, by email to the address; log, nowhere but the server log (no SMTP_URL is set), as a "mail (log mailer)" line with the link for the operator.',
    }),
  })
  .openapi('AuthProviders');

/** Where emailed links go, as the mailer delivers them (src/mail/mailer.ts; routes do not import mail). */
export type MailDelivery = z.infer<typeof AuthProviders>['mail_delivery'];

export const authProvidersRoute = defineRoute({
  auth: 'none',
  method: 'get',
  path: '/auth-providers',
  tags: ['Console'],
  summary: 'The sign-in methods this server offers (no credential)',
  responses: {
    200: { description: 'Sign-in methods', content: { 'application/json': { schema: AuthProviders } } },
  },
});

export function registerAuthProviders(api: Api, providers: SignInProvider[], mailDelivery: MailDelivery): void {
  const body = {
    email_password: true,
    providers: providers.map((p) => ({ id: p.id, name: p.name })),
    mail_delivery: mailDelivery,
  };
  api.openapi(authProvidersRoute, (c) => c.json(body, 200, { 'cache-control': 'no-cache' }));
}
