import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/events/ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('event ids (src/events/ids.ts)', () => {
  it('ids made from the clock increase strictly, also within one millisecond, so one write’s events list in the order made', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    expect(ids.every((id) => V7.test(id))).toBe(true);
    // Far more ids than milliseconds passed: many share one, and the counter orders them.
    expect(new Set(ids.map((id) => id.slice(0, 13))).size).toBeLessThan(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('an explicit time (seeded history) is the id’s time', () => {
    const at = Date.UTC(2024, 0, 2, 3, 4, 5, 6);
    const id = uuidv7(at);
    expect(V7.test(id)).toBe(true);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });
});
