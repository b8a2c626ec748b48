// One run of an overdue job in a process of its own (another instance, for scripts/bench/overdue.ts).
// It connects, says "ready", waits for a line on stdin, then runs and prints {"moved", "batches",
// "seconds"} as one JSON line: its start-up is not in the measured window. DATABASE_URL and
// OVERDUE_BATCH_SIZE as the service reads them; OVERDUE_OBJECT `invoices` (default) or `tasks`.
import { once } from 'node:events';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { runOverdueJob, type OverdueObject } from './overdue-objects.js';

const config = loadConfig();
const object = (process.env.OVERDUE_OBJECT ?? 'invoices') as OverdueObject;
const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: '', poolMax: 2 });
try {
  await db.prisma.$queryRaw`SELECT 1`;
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  const started = performance.now();
  const run = await runOverdueJob(db.prisma, object, config.overdue.batchSize);
  process.stdout.write(`${JSON.stringify({ ...run, seconds: (performance.now() - started) / 1000 })}\n`);
} finally {
  await db.close();
  process.stdin.destroy();
}
