/**
 * The baseline of the gateway benchmark: a bare @hono/node-server app on loopback, no middleware.
 * GET / answers a small JSON; POST /echo reads the body and answers a small JSON. Prints its URL.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
const body = { models: [{ name: 'hello', id: 'hello-world' }] };
app.get('/', (c) => c.json(body));
app.post('/echo', async (c) => {
  const text = await c.req.text();
  return c.json({ bytes: text.length });
});
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${info.port}` }));
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
