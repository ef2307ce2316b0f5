/**
 * The cookies of a console session, as better-auth names them (cookie prefix `brier`), with the
 * `__Secure-` prefix when the server's public URL is https.
 */
export function sessionCookies(publicUrl: string) {
  const secure = publicUrl.startsWith('https://');
  const name = (cookie: string) => `${secure ? '__Secure-' : ''}brier.${cookie}`;
  return {
    /** The session token's cookie (the OpenAPI `session` security scheme). */
    token: name('session_token'),
    /** Set-Cookie values that clear every session cookie. */
    clear: ['session_token', 'session_data', 'dont_remember'].map(
      (cookie) => `${name(cookie)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
    ),
  };
}
