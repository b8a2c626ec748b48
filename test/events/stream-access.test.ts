/**
 * docs/decisions.md §24: a member demoted or removed loses what the role gave at once, live streams
 * included. A stream opened as owner reads the owner's events (api_key.*, webhook_endpoint.*,
 * src/events/visibility.ts); handed down to member, it reads a member's. One instance, no Redis:
 * runs on PGlite and on PostgreSQL.
 */
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { createContactThrough, watchSubscriptions } from '../helpers/live.js';

const SUB = 'subscription ($a: ID!) { accountEvents(accountId: $a) { type } }';

let app: TestApp;
let live: ReturnType<typeof watchSubscriptions>;
const clients: Client[] = [];
beforeAll(async () => {
  // A local webhook address is allowed; it wants deal.deleted only, so nothing is ever sent to it.
  app = await createTestApp({ env: { REDIS_URL: '', EVENT_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, worker: true });
  live = watchSubscriptions(app);
});
afterAll(async () => {
  clients.forEach((c) => c.dispose());
  await live?.close();
  await app?.close();
});

/** The event types `as` receives live in the account until (and with) the first of type `last`. */
async function streamUntil(as: TestUser, accountId: string, last: string): Promise<{ types: Promise<string[]> }> {
  const client = createClient({ url: `${app.baseUrl}/graphql`, headers: { authorization: `Bearer ${as.token}` }, retryAttempts: 0 });
  clients.push(client);
  const results = client.iterate<{ accountEvents: { type: string } }>({ query: SUB, variables: { a: accountId } });
  const types = (async () => {
    const seen: string[] = [];
    for await (const result of results) {
      seen.push(result.data!.accountEvents.type);
      if (seen.at(-1) === last) break;
    }
    return seen;
  })();
  await live.listening(accountId);
  return { types };
}

const createEndpoint = (acc: TestAccount, as: TestUser) =>
  app.gql('mutation ($i: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret } }', { i: { accountId: acc.id, url: 'http://127.0.0.1:9/hook', eventTypes: ['deal.deleted'] } }, { as });

const transfer = (acc: TestAccount) =>
  app.gql('mutation ($a: ID!, $u: ID!) { transferOwnership(accountId: $a, userId: $u) { id } }', { a: acc.id, u: acc.member.id }, { as: acc.owner });

it("an owner handed down to member stops hearing the owner's events (api_key.*, webhook_endpoint.*) on the stream opened as owner", async () => {
  const acc = await createAccount(app);
  const stream = await streamUntil(acc.owner, acc.id, 'contact.created');
  await createApiKey(app, acc, ['CONTACTS_READ']); // heard: the owner's
  expect((await transfer(acc)).errors).toBeUndefined();
  // By the new owner: not for a member.
  await createApiKey(app, { ...acc, owner: acc.member }, ['CONTACTS_READ']);
  expect((await createEndpoint(acc, acc.member)).errors).toBeUndefined();
  await createContactThrough(app.baseUrl, acc.member, acc.id);
  expect(await stream.types).toEqual(['api_key.created', 'ownership.transferred', 'contact.created']);
});
