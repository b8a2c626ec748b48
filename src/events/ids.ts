import { randomUUID } from 'node:crypto';
import { noteEventId } from '../db/in-flight.js';

/** The clock's last millisecond an id was made in, and the counter within it (RFC 9562 §6.2, method 1). */
let lastMs = 0;
let counter = 0;

/**
 * A UUID version 7 (RFC 9562): time-ordered like the ids Prisma gives every other row (`uuid(7)`).
 * Ids made from the clock in one process increase strictly, also within a millisecond: the 12 bits
 * after the version are a counter there, so the events of one write (a submit's `contact.created`
 * then `form.submitted`) list in the order they were made wherever a list orders by time and id.
 * An explicit `at` (seeding history) takes random bits. The rest comes from randomUUID, which draws
 * from a cached pool of entropy (a batch makes two hundred ids: one randomBytes call each was 5% of
 * its CPU); a version 4's variant bits are v7's.
 */
export function uuidv7(at?: number): string {
  const random = randomUUID();
  let ms = at ?? Date.now();
  let sequence: string;
  if (at !== undefined) {
    sequence = random.slice(15, 18);
  } else {
    if (ms > lastMs) {
      lastMs = ms;
      // A random start below half the range leaves room to count up within the millisecond.
      counter = parseInt(random.slice(15, 18), 16) & 0x7ff;
    } else if (++counter > 0xfff) {
      lastMs += 1;
      counter = 0;
    }
    ms = lastMs;
    sequence = counter.toString(16).padStart(3, '0');
  }
  const time = ms.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${sequence}-${random.slice(19)}`;
}

/** An event's id: a uuidv7, noted for the write it is made in (src/db/in-doubt.ts). */
export function eventId(): string {
  const id = uuidv7();
  noteEventId(id);
  return id;
}
