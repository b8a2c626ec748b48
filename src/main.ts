import { createServer } from 'node:http';
import { createApp } from './app.js';
import { baseUrlOf, ConfigError, loadConfig, loadDotenv } from './config.js';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { DataDirLockedError } from './db/lock.js';
import { demoExists, demoOnStart, localBaseUrl, seedDemo, signInHint } from './demo.js';
import { offerDemoToken } from './graphiql.js';
import { startDraining } from './plugins/use-health.js';
import { answerClientErrors } from './http/client-error.js';
import { serveGraphqlWs } from './websocket.js';
import { createLogger, wantsPrettyLogs } from './logger.js';
import { openDeps, usesDevAuth } from './runtime.js';
import { checkDatabase, checkDataDir, listen, StartupError } from './startup.js';

let log = createLogger({ level: 'info' }); // until the configuration (LOG_LEVEL checked) says otherwise

async function main(): Promise<void> {
  const fromDotenv = loadDotenv(); // development only; the real environment wins
  const config = loadConfig();
  log = createLogger({ level: config.logLevel, pretty: wantsPrettyLogs(config.production) });
  if (fromDotenv.length > 0) log.info({ variables: fromDotenv }, 'read .env');
  // What a person may have got wrong, checked first so each failure is one line (src/startup.ts).
  if (!config.databaseUrl || usesDevAuth(config)) await checkDataDir(config.dataDir);
  if (config.databaseUrl) await checkDatabase(config.databaseUrl);
  const deps = await openDeps(config, log);
  const app = createApp(deps);
  const server = createServer(app);
  // Idle keep-alive connections outlive the client's and a proxy's own idle timers (undici ~4 s,
  // load balancers 60 s): at Node's 5 s a client on a busy machine sent its next request on a socket
  // the server was closing and saw a transport error (docs/faults.md).
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server); // JSON bodies for requests Node's parser refuses (431, 400)
  await listen(server, config).catch(async (error: unknown) => {
    await deps.close();
    throw error;
  });
  // graphql-ws on /graphql, beside SSE and multipart. Attached once listening: the WebSocket server
  // re-emits the listener's errors, and a port in use must stay startup.ts's one line.
  const websockets = serveGraphqlWs(server, app, deps);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const baseUrl = baseUrlOf(config.host, port);
  log.info({ baseUrl, database: deps.db.kind, redis: Boolean(config.redisUrl) }, 'listening');

  // How to get a token, by the database and the auth configured (docs/configuration.md#development-defaults);
  // a command it prints carries the variables the CLI needs from this environment (DATABASE_URL, DATA_DIR, ...).
  const start = { env: process.env, fromDotenv };
  if (usesDevAuth(config)) {
    // The embedded database is this machine's own: seeded. PostgreSQL's is told the token or how to seed it.
    const secret = await loadOrCreateDevSecret(config.dataDir);
    const demo = config.databaseUrl ? await demoOnStart(deps.db.prisma, secret, config.databaseUrl, start, config.auth) : await seedDemo(deps.db.prisma, secret, config.auth);
    process.stdout.write(demo.banner(localBaseUrl(config.host, port)));
    offerDemoToken(demo.token); // GraphiQL's shared headers start with it
  } else if (!config.production) {
    process.stdout.write(signInHint(config, await demoExists(deps.db.prisma), start));
  }

  // Graceful shutdown: stop accepting, let in-flight requests finish, then release the pools.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, delayMs: config.shutdownDelayMs }, 'shutting down');
    startDraining(deps); // /readyz answers 503 from now on
    // Keep accepting while the load balancer notices readiness is gone: closing the listener resets
    // every connection still waiting in its accept queue.
    setTimeout(() => {
      const force = setTimeout(() => {
        log.error('shutdown timed out; closing remaining connections');
        server.closeAllConnections();
      }, 20_000);
      force.unref();
      server.close(async () => {
        await deps.close().catch((err: unknown) => log.error({ err }, 'error while closing'));
        clearTimeout(force);
        process.exit(0);
      });
      server.closeIdleConnections();
      // Upgraded sockets are no longer the server's to close: told "going away" (1001), clients reconnect elsewhere.
      websockets.close().catch((err: unknown) => log.error({ err }, 'error while closing WebSockets'));
      log.info('listener closed');
    }, config.shutdownDelayMs);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    for (const line of error.message.split('\n')) process.stderr.write(`config: ${line}\n`);
  } else if (error instanceof DataDirLockedError) {
    process.stderr.write(`${error.message}\n`); // one line naming the holder (docs/faults.md)
  } else if (error instanceof StartupError) {
    process.stderr.write(`start: ${error.message}\n`);
  } else {
    log.fatal({ err: error }, 'failed to start');
  }
  process.exit(1);
});
