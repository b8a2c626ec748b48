import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AppDeps } from './deps.js';
import { publicBaseUrl } from './config.js';
import { loadRole, type Role } from './auth/access.js';
import type { OperationKind } from './http/origin.js';
import { clientIpOf, limitAddress } from './http/client-ip.js';
import { resolveViewer, type Viewer } from './auth/viewer.js';
import { rateLimited } from './errors.js';
import type { Reader } from './db/replicas.js';
import type { KeyQueue } from './db/queue-by-key.js';
import type { PrismaClient } from './generated/prisma/client.js';
import type { LimitResult, LimitRule } from './ratelimit/limiter.js';
import { memoryUploadSlots, type UploadSlots } from './ratelimit/upload-slots.js';

/** What every resolver gets: the database and who is asking, checked lazily and at most once. */
export type Context = {
  db: PrismaClient;
  /** For reads that may be a little behind: a streaming replica when one is healthy, else the primary (docs/scaling.md). */
  reader: Reader;
  /** Writes that would wait on one database lock wait here instead, holding no connection. */
  queue: KeyQueue;
  request: Request;
  requestId: string;
  clientIp: string;
  /** What per-address limits count for this client: its IPv4 address or its IPv6 /64 (docs/security.md). */
  limitAddress: string;
  userAgent: string | null;
  viewer(): Promise<Viewer>;
  role(accountId: string): Promise<Role | null>;
  /**
   * The caller's role in an account, read with a record by id (graphql/reads.ts): role() answers it
   * without a statement of its own. The first reading in a request stands; a key's role needs no read.
   */
  knowRole(accountId: string, role: Role | null): void;
  /**
   * Counts one call against `rule` for `identity`; throws RATE_LIMITED past the limit. Answers how
   * to take the call back: an idempotent replay is not charged again (docs/rest.md#idempotency).
   */
  charge(rule: LimitRule, identity: string): Promise<() => Promise<void>>;
  state: RequestState;
  /** Live events, webhook secrets and the target policy (src/events-runtime.ts). */
  events: AppDeps['events'];
  /** API keys: a revocation tells the cache (src/auth/api-keys.ts). */
  apiKeys: AppDeps['apiKeys'];
  /** Signs and checks list cursors (src/graphql/keyset.ts). */
  cursorKey: Buffer;
  /** TRASH_RETENTION_DAYS: when a trashed record is purged (docs/trash.md), as Account.trash tells. */
  trashRetentionDays: number;
  /** Uploads under way (src/ratelimit/upload-slots.ts). */
  uploads: UploadSlots;
  /** The threads that draw invoice PDFs (src/invoices/pdf-pool.ts); absent only in a context built without an app. */
  pdfs?: AppDeps['pdfs'];
  /** PUBLIC_URL, else the listen address: the base of absolute links (an invoice's hostedUrl). */
  publicUrl: string;
  /** Whether invoice mail is configured (SMTP_URL, MAIL_FROM): sendInvoice e-mails the client. */
  mailing: boolean;
};

/** Per-request facts the HTTP layers read back after execution (headers). */
export type RequestState = {
  requestId: string;
  /** The tightest limit met by this request, for the RateLimit-* headers (see `outranks`). */
  rateLimit: LimitResult | null;
  /** The answer is one stored for its Idempotency-Key (the Idempotent-Replayed header). */
  replayed?: boolean;
};

// Yoga copies the context object, so mutable per-request state lives here, found by the request.
const states = new WeakMap<Request, RequestState>();

export function requestState(request: Request): RequestState {
  let state = states.get(request);
  if (!state) states.set(request, (state = { requestId: requestIdOf(request), rateLimit: null }));
  return state;
}

/** What the HTTP server hands Yoga: Node's request when there is a socket, else a test's address. */
export type ServerContext = {
  req?: IncomingMessage;
  clientAddress?: string;
  /** The kind of operation a REST route runs: a GET that runs a mutation obeys the cross-site rule too. */
  operation?: OperationKind;
};

export function createContext(deps: AppDeps, request: Request, server: ServerContext): Context {
  let viewer: Promise<Viewer> | undefined;
  const roles = new Map<string, Promise<Role | null>>();
  const db = deps.db.prisma;
  const state = requestState(request);
  const clientIp = clientIpOf(request, server, deps.config.trustProxy);
  const context: Context = {
    db,
    reader: deps.db.reader,
    queue: deps.db.queue,
    request,
    requestId: state.requestId,
    clientIp,
    limitAddress: limitAddress(clientIp),
    userAgent: request.headers.get('user-agent'),
    viewer: () =>
      (viewer ??= resolveViewer(request, {
        db,
        verifyToken: deps.verifyToken,
        cookieName: deps.config.auth.cookieName,
        allowedOrigins: deps.config.allowedOrigins,
        knownUsers: deps.knownUsers,
        apiKeys: deps.apiKeys,
      }, server.operation)),
    role: async (accountId) => {
      const { id, apiKey } = await context.viewer();
      // A key acts for its own account only, with no database round trip; its scopes say what it may do.
      if (apiKey) return apiKey.accountId === accountId.toLowerCase() ? 'member' : null;
      let role = roles.get(accountId);
      if (!role) roles.set(accountId, (role = loadRole(db, accountId, id)));
      return role;
    },
    knowRole: (accountId, role) => {
      if (!roles.has(accountId)) roles.set(accountId, Promise.resolve(role));
    },
    charge: async (rule, identity) => {
      const result = await deps.limiter.consume(rule, identity);
      if (!state.rateLimit || outranks(result, state.rateLimit)) state.rateLimit = result;
      if (!result.allowed) {
        throw rateLimited(result.resetSeconds);
      }
      return async () => {
        if (!result.undo) return;
        await result.undo();
        // The headers say what is left with this call taken back: what the first answer said.
        if (state.rateLimit === result) state.rateLimit = { ...result, remaining: Math.min(result.limit, result.remaining + 1) };
      };
    },
    state,
    events: deps.events,
    apiKeys: deps.apiKeys,
    cursorKey: deps.cursorKey,
    trashRetentionDays: deps.config.trash.retentionDays,
    uploads: (deps.uploads ??= memoryUploadSlots()),
    pdfs: deps.pdfs,
    publicUrl: publicBaseUrl(deps.config),
    mailing: deps.config.mail !== null,
  };
  return context;
}

/**
 * Which limit the headers report when one request meets several: a refusal over any allowed call
 * (else an answer carrying RATE_LIMITED could lack Retry-After), the longest wait among refusals,
 * and the fewest remaining among allowed calls.
 */
function outranks(next: LimitResult, current: LimitResult): boolean {
  if (next.allowed !== current.allowed) return !next.allowed;
  return next.allowed ? next.remaining <= current.remaining : next.resetSeconds >= current.resetSeconds;
}

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}
