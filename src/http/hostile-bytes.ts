// docs/decisions.md §26 "Hostile bytes are client errors": a NUL, a malformed percent-escape (`%ZZ`,
// a lone `%`) or bytes that are not UTF-8 (`%C3%28`, `%FF`, an overlong `%C0%AF`) in a path segment
// or in a query parameter the service reads is the client's error (404 or 400), judged once at the
// edge, never handed on to a database that refuses it with a 500 (or, decoded leniently into U+FFFD
// as URLSearchParams does, to a silent success).

/** The message a query parameter with such bytes is refused with (400 `Invalid query`). */
export const HOSTILE_BYTES = 'Must be percent-encoded UTF-8 without NUL characters';

const MALFORMED_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * A raw (still percent-encoded) URL component as text, or null when its bytes are hostile: a
 * malformed escape, bytes that are not UTF-8 (decodeURIComponent refuses them, overlong forms and
 * encoded surrogates included), or a NUL. `form`: a query string's component, where `+` is a space.
 */
export function decodeComponent(raw: string, form = false): string | null {
  if (MALFORMED_ESCAPE.test(raw)) return null;
  let text: string;
  try {
    text = decodeURIComponent(form ? raw.replace(/\+/g, ' ') : raw);
  } catch {
    return null;
  }
  return text.includes('\u0000') ? null : text;
}

/**
 * The names among `read` that a query string (`url.search`, raw) gives hostile bytes in, each once,
 * in their order. Parameters the service does not read stay ignored (§3), whatever they hold.
 */
export function hostileParameters(search: string, reads: ReadonlySet<string> | ((name: string) => boolean)): string[] {
  const found: string[] = [];
  if (typeof reads !== 'function' && reads.size === 0) return found;
  const read = typeof reads === 'function' ? { has: reads } : reads;
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const name = decodeComponent(at < 0 ? pair : pair.slice(0, at), true);
    if (name === null || !read.has(name) || found.includes(name)) continue;
    if (at >= 0 && decodeComponent(pair.slice(at + 1), true) === null) found.push(name);
  }
  return found;
}

/**
 * Whether a header's value holds hostile bytes: a NUL (Node's parser refuses one before the app),
 * or bytes that are not UTF-8 (Node hands header bytes over as Latin-1 characters, one a byte).
 */
export function hostileHeader(value: string): boolean {
  if (value.includes('\u0000')) return true;
  if (!/[^\x00-\x7f]/.test(value)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'latin1'));
    return false;
  } catch {
    return true;
  }
}
