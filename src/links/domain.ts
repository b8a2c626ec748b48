// A company's domain and a contact's e-mail domain (docs/decisions.md §21): how a domain is
// written down, and which domains never link a person to a company.
import { z } from 'zod';
import { text } from '../validation.js';

export const NOT_A_HOST = 'Must be a host name such as acme.com';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * `Acme.com/`, `https://www.acme.com/about` and `acme.com.` are all `acme.com`: the host of what
 * was given, lower case, without a scheme, path, port, trailing dot or leading `www.`. Null when
 * that is not a host name (two labels or more, the last not numeric).
 */
export function normalizeDomain(given: string): string | null {
  let host = given.trim().toLowerCase();
  host = host.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  host = host.replace(/[/?#].*$/, '').replace(/^[^@]*@/, '').replace(/:\d*$/, '').replace(/\.$/, '');
  if (host.startsWith('www.')) host = host.slice(4);
  if (host.length === 0 || host.length > 253) return null;
  const labels = host.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^\d+$/.test(labels.at(-1)!)) return null;
  return host;
}

/** The optional `domain` of a company's input: normalised, blank = none, anything else a 400 on it. */
export const optionalDomain = text()
  .nullish()
  .transform((value, ctx) => {
    if (value == null || value.trim() === '') return null;
    const host = normalizeDomain(value);
    if (host === null) ctx.addIssue({ code: 'custom', message: NOT_A_HOST });
    return host ?? z.NEVER;
  });

/**
 * Mail providers whose addresses say nothing about a person's employer: an address here never links
 * a contact to a company, even one that carries the domain. `gmx.*` is any GMX country domain.
 */
export const FREE_MAIL_DOMAINS: readonly string[] = [
  'gmail.com', 'googlemail.com',
  'outlook.com', 'hotmail.com', 'hotmail.co.uk', 'live.com', 'msn.com',
  'yahoo.com', 'yahoo.co.uk', 'ymail.com', 'rocketmail.com',
  'icloud.com', 'me.com', 'mac.com',
  'aol.com', 'proton.me', 'protonmail.com', 'pm.me', 'tutanota.com', 'zoho.com', 'fastmail.com',
  'web.de', 't-online.de', 'freenet.de', 'mail.ru', 'yandex.ru', 'yandex.com', 'qq.com', '163.com',
];
const FREE = new Set(FREE_MAIL_DOMAINS);

export const isFreeMail = (domain: string): boolean => FREE.has(domain) || /^gmx\.[a-z.]+$/.test(domain);

/** The domain a contact's e-mail links by: its host, lower case; null for none or free mail. */
export function linkableDomain(email: string | null | undefined): string | null {
  const at = email?.lastIndexOf('@') ?? -1;
  if (!email || at < 0) return null;
  const domain = normalizeDomain(email.slice(at + 1));
  return domain === null || isFreeMail(domain) ? null : domain;
}
