import { describe, expect, it } from 'vitest';
import { isFreeMail, linkableDomain, normalizeDomain } from '../../src/links/domain.js';

// docs/decisions.md §21: a company's domain is a lower-case host name; free mail never links.

describe('domain normalisation', () => {
  it.each([
    ['Acme.com/', 'acme.com'],
    ['https://www.acme.com', 'acme.com'],
    ['HTTP://Shop.Acme.CO.UK:8080/about?x=1', 'shop.acme.co.uk'],
    ['  acme.com.  ', 'acme.com'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
  ])('%s is stored as %s', (given, stored) => expect(normalizeDomain(given)).toBe(stored));

  it.each(['acme', 'not a host', 'acme..com', '-acme.com', '10.0.0.1', 'https://', 'ac_me.com'])('%s is not a host name', (given) =>
    expect(normalizeDomain(given)).toBeNull(),
  );
});

describe('free-mail domains never link', () => {
  it.each(['gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'yahoo.com', 'icloud.com', 'me.com', 'aol.com', 'proton.me', 'protonmail.com', 'gmx.de', 'gmx.net', 'gmx.co.uk', 'web.de', 'mail.ru', 'yandex.ru'])(
    '%s is free mail',
    (domain) => {
      expect(isFreeMail(domain)).toBe(true);
      expect(linkableDomain(`someone@${domain.toUpperCase()}`)).toBeNull();
    },
  );

  it("a work address links by its host, lower case; none and malformed addresses do not", () => {
    expect(linkableDomain('Ada@Acme.COM')).toBe('acme.com');
    expect(linkableDomain(null)).toBeNull();
    expect(linkableDomain('no-at-sign')).toBeNull();
  });
});
