// The bench's second reference: PostGraphile 5 (amber preset) over the same bench database, what
// users who want "a fast GraphQL API over PostgreSQL" would pick instead. Defaults as its docs start
// it: every table of `public` exposed, grafserv's node adapter, NODE_ENV=production from the bench.
// No auth and no membership check (anyone may read or write any account): that favours it against
// the service and the floor, which verify a JWT and the membership on every request.
// Env: DATABASE_URL, PORT (0 = any), HOST, DATABASE_POOL_MAX (default 10).
// PostGraphile comes from this folder's own node_modules (install.ts), not the project's.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

// PostGraphile 5 wants Node 22 and calls Promise.withResolvers (Node ≥ 22), which Node 20 lacks;
// the project still runs on Node 20 (package.json engines), so this process only gets a polyfill,
// installed before the dynamic imports below load grafast and @dataplan/pg.
const promise = Promise as PromiseConstructor & { withResolvers?: unknown };
if (typeof promise.withResolvers !== 'function') {
  promise.withResolvers = function withResolvers<T>(this: PromiseConstructor) {
    let resolve!: (value: T | PromiseLike<T>) => void;
    let reject!: (reason?: unknown) => void;
    const p = new this<T>((res, rej) => { resolve = res; reject = rej; });
    return { promise: p, resolve, reject };
  };
}

// Loaded by a specifier the type checker does not follow, and typed here for what this file uses:
// grafast's declarations augment `graphql` for the whole program (ExecutionResult.hasNext?: never),
// which would break the service's own typing (src/graphql/mask.ts) once any file imports them.
type Handler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
type Serv = { createHandler(): Handler };
type Instance = { getSchema(): Promise<unknown>; createServ(grafserv: unknown): Serv; release(): Promise<void> };
const load = (specifier: string) => import(specifier);
const [{ postgraphile }, { PostGraphileAmberPreset }, { makePgService }, { grafserv }] = (await Promise.all([
  load('postgraphile'),
  load('postgraphile/presets/amber'),
  load('postgraphile/adaptors/pg'),
  load('postgraphile/grafserv/node'),
])) as [{ postgraphile(preset: object): Instance }, { PostGraphileAmberPreset: object }, { makePgService(options: object): object }, { grafserv: unknown }];

/** The PostGraphile instance over `databaseUrl`: a pool of `poolMax` connections, like the other two servers. */
export function createPostGraphile(opts: { databaseUrl: string; poolMax: number }): Instance {
  return postgraphile({
    extends: [PostGraphileAmberPreset],
    // pubsub off: no subscriptions are benched, and its LISTEN client would hold one of the pool's connections.
    pgServices: [makePgService({ connectionString: opts.databaseUrl, schemas: ['public'], poolConfig: { max: opts.poolMax }, pubsub: false })],
    grafserv: { graphiql: false, watch: false },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('postgraphile: DATABASE_URL is required\n');
    process.exit(1);
  }
  const pgl = createPostGraphile({ databaseUrl, poolMax: Number(process.env.DATABASE_POOL_MAX) || 10 });
  // Introspection and the schema first: /healthz answers once a query can be served.
  await pgl.getSchema();
  const serv = pgl.createServ(grafserv);
  // createHandler (not addTo): it hands unknown paths to `next`, so /healthz can sit beside it (no websockets needed).
  const graphql = serv.createHandler();
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    graphql(req, res, () => res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}'));
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
  });
  // The instance's release also releases the serv and ends the pool.
  const stop = () => void new Promise((r) => server.close(r)).then(() => pgl.release()).then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
