import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * Calls `onNotify` for each notification on `channel` (PostgreSQL LISTEN/NOTIFY); resolves to a
 * function that stops listening. What a notification says is only "look now": a listener may
 * miss some (a dropped connection), so its user keeps a slow poll as well.
 */
export type Listen = (channel: string, onNotify: () => void) => Promise<() => Promise<void>>;

const RECONNECT_MS = 1_000;

/**
 * LISTEN on a connection of its own, outside the pool: a pooled connection goes back to other work,
 * and PgBouncer in transaction mode forwards no notifications, so `url` is the direct URL when there
 * is one (docs/scaling.md). A lost connection is reopened after a second; each (re)open also calls
 * `onNotify` once, for what committed while nobody listened.
 */
export function listenOnPostgres(url: string, connectTimeoutMs: number, onError: (err: Error) => void): Listen {
  return async (channel, onNotify) => {
    let current: pg.Client | null = null;
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    const drop = (client: pg.Client) => {
      if (current === client) current = null;
      client.end().catch(() => undefined);
      if (!closed && !retry) retry = setTimeout(() => ((retry = undefined), void open()), RECONNECT_MS).unref();
    };
    const open = async () => {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
      client.on('notification', (message) => message.channel === channel && onNotify());
      client.on('error', (err) => (onError(err), drop(client)));
      client.on('end', () => drop(client));
      try {
        await client.connect();
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      } catch (err) {
        onError(err as Error);
        return drop(client);
      }
      if (closed) return void client.end().catch(() => undefined);
      current = client;
      onNotify();
    };
    await open();
    return async () => {
      closed = true;
      clearTimeout(retry);
      await current?.end().catch(() => undefined);
    };
  };
}

/** PGlite is one session in this process: its own listen() hears what that session commits. */
export function listenOnPGlite(pglite: PGlite): Listen {
  return async (channel, onNotify) => {
    const unlisten = await pglite.listen(channel, () => onNotify());
    return () => unlisten();
  };
}

/**
 * Whether a notification sent by `notify` (through the pool) reaches `listen` within `timeoutMs`.
 * Not behind PgBouncer in transaction mode when `listen` goes through it too: it forwards none
 * (docs/scaling.md#set-ups-and-what-each-needs). The call each open makes is not counted.
 */
export async function notificationsArrive(listen: Listen, notify: (channel: string) => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  const channel = `crm_probe_${randomUUID().replaceAll('-', '')}`;
  let opened = false;
  let heard = () => {};
  const arrived = new Promise<boolean>((resolve) => (heard = () => resolve(true)));
  const stop = await listen(channel, () => opened && heard());
  opened = true;
  let timer: NodeJS.Timeout | undefined;
  try {
    await notify(channel);
    return await Promise.race([arrived, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
  } finally {
    clearTimeout(timer);
    await stop();
  }
}
