// docs/scaling.md "Statements shared by concurrent requests": what arrives while a statement of its
// kind runs waits, then shares the next one with the others that waited; each gets its own answer,
// and an error only its own.
import { describe, expect, it, vi } from 'vitest';
import { LONGEST_WAIT_MS, shareStatements, together } from '../../src/db/together.js';

/**
 * A statement the test ends: each call of `run` waits for `finish`, then answers each input
 * upper-cased, or throws when one of its inputs is `poisoned`.
 */
function heldStatements(poisoned = new Set<string>()) {
  const calls: string[][] = [];
  const pending: (() => void)[] = [];
  const run = (inputs: string[]): Promise<string[]> => {
    calls.push(inputs);
    return new Promise<void>((resolve) => pending.push(resolve)).then(() => {
      if (inputs.some((i) => poisoned.has(i))) throw new Error(`refused: ${inputs.join()}`);
      return inputs.map((i) => i.toUpperCase());
    });
  };
  /** Ends the statements begun so far, once that many have begun. */
  const finish = async (begun: number) => {
    await expect.poll(() => calls.length).toBe(begun);
    for (const end of pending.splice(0)) end();
  };
  return { calls, run, finish };
}

describe('statements shared by concurrent requests', () => {
  it('with nothing of its kind running, an input runs at once, alone', async () => {
    const { calls, run, finish } = heldStatements();
    const answer = together({}, 'k', 'a', run);
    await finish(1);
    expect(await answer).toBe('A');
    expect(calls).toEqual([['a']]);
  });

  it('inputs arriving while one runs share the next statement, and each gets its own answer', async () => {
    const db = {};
    const { calls, run, finish } = heldStatements();
    const answers = ['a', 'b', 'c', 'd'].map((i) => together(db, 'k', i, run));
    await finish(1);
    await finish(2);
    expect(await Promise.all(answers)).toEqual(['A', 'B', 'C', 'D']);
    expect(calls).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('only inputs of the same kind and database client share a statement', async () => {
    const { calls, run, finish } = heldStatements();
    const db = {};
    const answers = [together(db, 'k', 'a', run), together(db, 'other', 'b', run), together({}, 'k', 'c', run)];
    await finish(3);
    expect(await Promise.all(answers)).toEqual(['A', 'B', 'C']);
    expect(calls).toEqual([['a'], ['b'], ['c']]);
  });

  it('a shared statement that fails with what may be one input\'s own error runs again input by input, so the error reaches only the request that caused it', async () => {
    const db = {};
    const { calls, run, finish } = heldStatements(new Set(['bad']));
    const [first, good, bad, alsoGood] = ['a', 'b', 'bad', 'c'].map((i) => together(db, 'k', i, run, { ownError: () => true }));
    await finish(1);
    await finish(2);
    await finish(5);
    expect(calls).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
    await expect(bad).rejects.toThrow('refused: bad');
    expect(await Promise.all([first, good, alsoGood])).toEqual(['A', 'B', 'C']);
  });

  it('any other error of a shared statement (a timeout) reaches every input that shared it, at once, none run again', async () => {
    const db = {};
    const { calls, run, finish } = heldStatements(new Set(['bad']));
    const [first, ...shared] = ['a', 'b', 'bad', 'c'].map((i) => together(db, 'k', i, run, { ownError: () => false }));
    await finish(1);
    await finish(2);
    expect(await first).toBe('A');
    for (const answer of shared) await expect(answer).rejects.toThrow('refused: b,bad,c');
    expect(calls).toEqual([['a'], ['b', 'bad', 'c']]);
  });

  it('a statement that fails alone is that input\'s error, not run again', async () => {
    const { calls, run, finish } = heldStatements(new Set(['bad']));
    const bad = together({}, 'k', 'bad', run);
    await finish(1);
    await expect(bad).rejects.toThrow('refused: bad');
    expect(calls).toEqual([['bad']]);
  });

  it('a group takes at most `most` weight: one that would pass it runs as it stands, and the input starts the next group', async () => {
    const db = {};
    const { calls, run, finish } = heldStatements();
    const sharing = { weight: (i: string) => i.length, most: 6 };
    const answers = ['a', 'bbb', 'ccc', 'd', 'eeeeeeee'].map((i) => together(db, 'k', i, run, sharing));
    // 'd' does not fit beside bbb and ccc, so they run; 'eeeeeeee' does not fit beside 'd', so 'd' runs.
    await finish(3);
    // 'eeeeeeee', heavier than `most` itself, still runs, alone, after a statement ends.
    await finish(4);
    expect(await Promise.all(answers)).toEqual(['A', 'BBB', 'CCC', 'D', 'EEEEEEEE']);
    expect(calls).toEqual([['a'], ['bbb', 'ccc'], ['d'], ['eeeeeeee']]);
  });

  it(`a group waits at most its client's bound (${LONGEST_WAIT_MS} ms unless set) for the statement before it: a statement that hangs holds back only its own inputs`, async () => {
    vi.useFakeTimers();
    try {
      const db = {};
      const { calls, run, finish } = heldStatements();
      shareStatements(db, 50);
    const hanging = together(db, 'k', 'a', run);
      const waiting = [together(db, 'k', 'b', run), together(db, 'k', 'c', run)];
      await vi.advanceTimersByTimeAsync(49);
      expect(calls).toEqual([['a']]);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toEqual([['a'], ['b', 'c']]);
      const pending = finish(2);
      await vi.runAllTimersAsync();
      await pending;
      expect(await Promise.all([hanging, ...waiting])).toEqual(['A', 'B', 'C']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a line ends when nothing waits: the next input runs at once again', async () => {
    const db = {};
    const { calls, run, finish } = heldStatements();
    const first = [together(db, 'k', 'a', run), together(db, 'k', 'b', run)];
    await finish(1);
    await finish(2);
    await Promise.all(first);
    const later = together(db, 'k', 'c', run);
    await finish(3);
    await later;
    expect(calls).toEqual([['a'], ['b'], ['c']]);
  });
});
