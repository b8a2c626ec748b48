// Events carry every column of a record as its model declares it, JSON columns included, and never
// its relations (src/events/serialize.ts): a JSON column added to a table reaches events unedited.
import { describe, expect, it } from 'vitest';
import { serializeRecord } from '../../src/events/serialize.js';

describe('serializeRecord', () => {
  it("keeps a JSON column's object and drops a relation read beside the row", () => {
    const row = { id: 'i1', accountId: 'a1', valueMapping: { contact_type: { customer: 'client' } }, account: { id: 'a1', name: 'Studio' }, createdById: null };
    const shown = serializeRecord('import', row);
    expect(shown).toMatchObject({ id: 'i1', value_mapping: { contact_type: { customer: 'client' } } });
    expect(shown).not.toHaveProperty('account');
    expect(shown).not.toHaveProperty('account_id');
  });

  it("drops a deal's related contact and stage, keeps its day as YYYY-MM-DD and money as a number", async () => {
    const { Prisma } = await import('../../src/generated/prisma/client.js');
    const row = { id: 'd1', accountId: 'a1', value: new Prisma.Decimal('12.50'), expectedCloseDate: new Date('2026-12-01T00:00:00Z'), contact: { id: 'c1' }, stage: null };
    expect(serializeRecord('deal', row)).toEqual({ id: 'd1', value: 12.5, expected_close_date: '2026-12-01' });
  });
});
