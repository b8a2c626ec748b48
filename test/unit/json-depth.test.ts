// The JSON scalar refuses values nested deeper than JSON_MAX_DEPTH (src/graphql/scalars.ts): the
// check answers at the limit however deep the value goes, so a 1 MiB body of brackets cannot
// overflow the stack of the check itself.
import { describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH, jsonDepthWithin } from '../../src/graphql/scalars.js';

/** `levels` nested containers, alternating objects and arrays, built without recursion. */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { k: value };
  return value;
}

describe('the JSON depth limit', () => {
  it(`passes ${JSON_MAX_DEPTH} levels of objects and arrays and refuses one more`, () => {
    expect(jsonDepthWithin(nested(JSON_MAX_DEPTH), JSON_MAX_DEPTH)).toBe(true);
    expect(jsonDepthWithin(nested(JSON_MAX_DEPTH + 1), JSON_MAX_DEPTH)).toBe(false);
    expect(jsonDepthWithin({ a: 1, b: [1, 2, { c: null }], d: 'x' }, 3)).toBe(true);
    expect(jsonDepthWithin({ a: 1, b: [1, 2, { c: {} }] }, 3)).toBe(false);
  });

  it('counts scalars as no level: a string, a number or null passes any limit', () => {
    for (const value of ['x', 1, null, true]) expect(jsonDepthWithin(value, 0)).toBe(true);
  });

  it('answers for 500,000 levels (what a 1 MiB body can hold) without overflowing the stack', () => {
    expect(jsonDepthWithin(nested(500_000), JSON_MAX_DEPTH)).toBe(false);
  });
});
