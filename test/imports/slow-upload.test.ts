// docs/imports.md#intake: a file is stored by one COPY that lasts as long as its upload, which may be
// longer than the statement bound every other statement keeps (DATABASE_STATEMENT_TIMEOUT_MS): a
// million rows take about a minute to arrive. A real server with a 1 s bound receives a file whose
// second half arrives after more than that.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { openDatabase } from '../../src/db/client.js';
import { killServer, startServer, type ServerProcess } from '../../scripts/soak/services.js';
import { TEST_SECRET } from '../helpers/app.js';
import { cloneDatabaseForProcess } from '../helpers/database.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const BOUND_MS = 1_000;
let server: ServerProcess | undefined;
afterAll(() => killServer(server));

describe('an upload slower than the statement bound', () => {
  it(`a file whose body arrives over more than DATABASE_STATEMENT_TIMEOUT_MS (${BOUND_MS} ms) is stored whole: 202 and every row`, async () => {
    const database = await cloneDatabaseForProcess(inject('template'));
    const owner = crypto.randomUUID();
    const setup = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? '' });
    let accountId: string;
    try {
      await setup.prisma.user.create({ data: { id: owner } });
      accountId = (await setup.prisma.account.create({ data: { name: 'Slow', ownerId: owner } })).id;
    } finally {
      await setup.close();
    }
    server = await startServer({ ...database.env, AUTH_JWT_SECRET: TEST_SECRET, DATABASE_STATEMENT_TIMEOUT_MS: String(BOUND_MS) });
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => `Slow ${from + i},slow${from + i}@example.com\r\n`).join('');
    const encoder = new TextEncoder();
    // The body in two parts; between them, longer than the bound (the point of the test is elapsed time).
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(`first_name,email\r\n${rows(0, 2000)}`));
        await sleep(BOUND_MS * 2.5);
        controller.enqueue(encoder.encode(rows(2000, 2000)));
        controller.close();
      },
    });
    const token = await mintToken(TEST_SECRET, { sub: owner });
    const posted = await fetch(`${server.baseUrl}/api/v1/imports?account_id=${accountId}&object=contacts`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' },
      duplex: 'half',
    } as RequestInit);
    const answer = (await posted.json()) as { data: { rows_total: number } };
    expect({ status: posted.status, rows: answer.data?.rows_total }).toEqual({ status: 202, rows: 4000 });
    await killServer(server);
    await database.drop();
  });
});
