// Work of concurrent requests in one statement (docs/scaling.md "Statements shared by concurrent
// requests"). What arrives while a statement of the same kind is running waits for it, then goes
// with everything else that waited, as one statement; when nothing of its kind is running, it runs at
// once, alone, as it would without this. PostgreSQL's cost of a small statement is mostly the
// statement's own (its round trip, its transaction, its commit), not its rows': under concurrent
// requests each pays a share of one (BENCHMARKS.md "Statements shared by concurrent requests").
//
// Waiting is bounded: a group that has waited LONGEST_WAIT_MS runs then, beside the statement it
// waited for, so a statement that hangs (a frozen database, a lock) holds back only its own inputs.
// A statement that fails has done nothing (each is atomic). When its error may be one input's own
// (a constraint one row breaks), the inputs that shared it run again one by one, so the error
// reaches the request that caused it and no other; any other error (a timeout) reaches them all.

import { currentFlight, sharedFlight, type InFlight } from './in-flight.js';

/** The longest an input waits for the running statement before its group runs anyway, unless shareStatements set the client's. */
export const LONGEST_WAIT_MS = 20;

const longestWaits = new WeakMap<object, number>();

/** `db`'s bound on waiting to share a statement (DATABASE_SHARED_WAIT_MS): 0 runs every group at once, beside what runs. */
export const shareStatements = (db: object, longestWaitMs: number): void => void longestWaits.set(db, longestWaitMs);

/** An input waiting, with the write it belongs to (src/db/in-doubt.ts: the backends the shared statement went to are its too). */
type Waiting<I, A> = { input: I; writer: InFlight | undefined; resolve: (answer: A) => void; reject: (error: unknown) => void };
/** A kind's statements running now, and the group waiting to run next (with its timer). */
type Line<I, A> = { running: number; group: Waiting<I, A>[] | null; weight: number; timer?: NodeJS.Timeout };

/** Per database client, its lines by kind; a line ends when nothing of it runs or waits. */
const lines = new WeakMap<object, Map<string, Line<unknown, unknown>>>();

export type Sharing<I> = {
  /** How much of a statement an input takes (a set's rows); 1 when not given. */
  weight?: (input: I) => number;
  /** The most weight one statement takes: a group that would pass it runs as it stands, and a new one waits. */
  most?: number;
  /**
   * Whether a shared statement's error may be one input's own (a constraint one row breaks): then each
   * input runs again alone, to find whose. Otherwise (a timeout, a lost connection) every input that
   * shared the statement gets the error, at once: running each again would only wait that long again.
   */
  ownError?: (error: unknown) => boolean;
};

/**
 * `run([input])`'s one answer, or, while a statement of the same `kind` runs on `db`, the answer
 * `run` gives this input when called with it and the others that waited. `run` answers each of its
 * inputs, in their order; `kind` names everything the statement is made of besides the inputs.
 */
export function together<I, A>(db: object, kind: string, input: I, run: (inputs: I[]) => Promise<A[]>, { weight = () => 1, most = Infinity, ownError = () => false }: Sharing<I> = {}): Promise<A> {
  let byKind = lines.get(db);
  if (!byKind) lines.set(db, (byKind = new Map()));
  const line = (byKind.get(kind) ?? { running: 0, group: null, weight: 0 }) as Line<I, A>;
  byKind.set(kind, line as Line<unknown, unknown>);
  const start = (group: Waiting<I, A>[]) => {
    line.running++;
    void runGroup(group, run, ownError).finally(() => {
      line.running--;
      if (line.group) start(close(line));
      else if (line.running === 0) byKind.delete(kind);
    });
  };
  return new Promise<A>((resolve, reject) => {
    const waiting = { input, writer: currentFlight(), resolve, reject };
    if (line.running === 0) return start([waiting]);
    const heavy = weight(input);
    if (line.group && line.weight + heavy > most) start(close(line));
    if (!line.group) {
      line.group = [];
      line.weight = 0;
      line.timer = setTimeout(() => line.group && start(close(line)), longestWaits.get(db) ?? LONGEST_WAIT_MS);
    }
    line.group.push(waiting);
    line.weight += heavy;
  });
}

/** The line's waiting group, taken off it to run. */
function close<I, A>(line: Line<I, A>): Waiting<I, A>[] {
  clearTimeout(line.timer);
  const group = line.group!;
  line.group = null;
  return group;
}

/** Runs `group` as one statement and answers each; when it fails with what may be one input's own error, each again alone. */
async function runGroup<I, A>(group: Waiting<I, A>[], run: (inputs: I[]) => Promise<A[]>, ownError: (error: unknown) => boolean): Promise<void> {
  try {
    const answers = await sharedFlight(group.map((w) => w.writer), () => run(group.map((w) => w.input)));
    group.forEach((w, i) => w.resolve(answers[i]!));
  } catch (error) {
    if (group.length === 1 || !ownError(error)) for (const w of group) w.reject(error);
    else await Promise.all(group.map((w) => sharedFlight([w.writer], () => run([w.input])).then(([answer]) => w.resolve(answer!), w.reject)));
  }
}

/** How many inputs wait on `db` now to share a statement (the db_statements_waiting gauge of /metrics). */
export function waitingOn(db: object): number {
  let waiting = 0;
  for (const line of lines.get(db)?.values() ?? []) waiting += line.group?.length ?? 0;
  return waiting;
}
