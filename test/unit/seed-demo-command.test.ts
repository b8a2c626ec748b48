import { describe, expect, it } from 'vitest';
import { seedDemoCommand } from '../../src/demo.js';

// A start on PostgreSQL without the demo account prints the command that seeds it (src/demo.ts):
// run as printed, it must reach that database, not the embedded one.
describe('the seed command a start on PostgreSQL prints', () => {
  it('carries the DATABASE_URL the service runs on', () => {
    expect(seedDemoCommand('postgresql://postgres@127.0.0.1:5432/test')).toBe("DATABASE_URL='postgresql://postgres@127.0.0.1:5432/test' npm run cli -- seed demo");
  });

  it('never prints the password: <password> stands in its place', () => {
    const command = seedDemoCommand('postgresql://crm:s3cr%40t@db.example:6432/crm?sslmode=require');
    expect(command).toBe("DATABASE_URL='postgresql://crm:<password>@db.example:6432/crm?sslmode=require' npm run cli -- seed demo");
    expect(command).not.toContain('s3cr');
  });
});
