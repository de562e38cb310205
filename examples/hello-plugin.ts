/**
 * An example third-party plugin: registers a command and a route that runs it.
 * Load it with `"plugins": ["storage-lmdb", "data", "http", "./dist/examples/hello-plugin.js"]`.
 */
import { definePlugin } from 'engine';

interface GreetParams { name: string }

export default definePlugin<{ greeting?: string }>({
  name: 'hello',
  version: '1.0.0',
  dependencies: ['http'],
  register(engine, options) {
    const greeting = options.greeting ?? 'Hello';
    engine.bus.register<GreetParams, { message: string }>({
      name: 'hello.greet',
      summary: 'Greets someone',
      params: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 64 } } },
      resource: () => ({ kind: 'system' }),
      handler: ({ name }, ctx) => ({ message: `${greeting}, ${name} (from ${ctx.principal.account})` }),
    });
    const greet = engine.bus.resolve<GreetParams, { message: string }>('hello.greet');
    engine.need('http').fastify.get<{ Querystring: { name?: string } }>('/hello', async (request) => {
      const header = request.headers.authorization ?? '';
      const [user, password] = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString().split(':');
      const principal = await engine.logins.authenticate({ username: user ?? '', password: password ?? '', address: request.socket.remoteAddress });
      return greet({ name: request.query.name ?? '' }, { principal, origin: 'hello' });
    });
  },
});
