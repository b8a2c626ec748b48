import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { CliError, parseOptions, requireOption, type Command } from './command.js';

/**
 * A local webhook receiver for integrators (docs/events.md): verifies each request with the
 * `standardwebhooks` package and prints the event, so the flow is visible in a minute.
 * Point an endpoint at it with WEBHOOK_ALLOW_PRIVATE_TARGETS=true (loopback is otherwise refused).
 */
export const webhookListen: Command = {
  name: 'webhook:listen',
  usage: '--secret <whsec_...> [--port 4000] [--host 127.0.0.1]',
  summary: 'a local receiver that prints verified webhook events (the secret is the one createWebhookEndpoint showed)',
  async run(args, io) {
    const { values } = parseOptions(this, args, {
      secret: { type: 'string' },
      port: { type: 'string', default: '4000' },
      host: { type: 'string', default: '127.0.0.1' },
    });
    const secret = requireOption(this, values, 'secret');
    if (!/^whsec_[A-Za-z0-9+/=]+$/.test(secret)) throw new CliError(['--secret must be a whsec_... secret']);
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(['--port must be from 0 to 65535']);
    const webhook = new Webhook(secret);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          const event = webhook.verify(body, req.headers as Record<string, string>) as { type?: string };
          io.out(JSON.stringify(event));
          res.writeHead(204).end();
        } catch {
          io.err(`refused a request that does not verify (webhook-id ${String(req.headers['webhook-id'] ?? '-')})`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, String(values.host), resolve));
    const address = server.address();
    io.err(`listening on http://${String(values.host)}:${typeof address === 'object' && address ? address.port : port}/ (Ctrl-C to stop)`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return 0;
  },
};
