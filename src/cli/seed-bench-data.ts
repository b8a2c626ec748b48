// The vocabulary of the bench dataset: people, companies and what they buy, from a seeded generator
// so the same seed gives the same names and values.
import { randomFillSync } from 'node:crypto';
import { ContactSource, ContactType } from '../generated/prisma/client.js';

const FIRST = ['Ada', 'Aiko', 'Alan', 'Amara', 'Ana', 'Anders', 'Arjun', 'Astrid', 'Ben', 'Bianca', 'Carla', 'Chen', 'Chloe', 'Dario', 'Daniel', 'Diego', 'Elena', 'Elif', 'Emma', 'Ezra', 'Farah', 'Felix', 'Freya', 'Grace', 'Hana', 'Hugo', 'Ines', 'Isaac', 'Ivan', 'Jamal', 'Jana', 'Joon', 'Kai', 'Kenji', 'Kofi', 'Lara', 'Leo', 'Lina', 'Lucas', 'Malik', 'Maya', 'Mateo', 'Mei', 'Mia', 'Nadia', 'Nils', 'Noah', 'Olga', 'Omar', 'Oscar', 'Priya', 'Rafael', 'Ravi', 'Rosa', 'Sam', 'Sara', 'Sofia', 'Soren', 'Tariq', 'Theo', 'Uma', 'Victor', 'Wen', 'Yara', 'Yusuf', 'Zoe', 'Zane', 'Zara'];
const LAST = ['Adams', 'Ahmed', 'Andersson', 'Bauer', 'Becker', 'Brown', 'Castro', 'Chen', 'Costa', 'Dubois', 'Evans', 'Fischer', 'Garcia', 'Gupta', 'Hansen', 'Hughes', 'Ibrahim', 'Ito', 'Jensen', 'Kim', 'Kowalski', 'Larsen', 'Lopez', 'Martin', 'Meyer', 'Moreau', 'Murphy', 'Nakamura', 'Nguyen', 'Novak', "O'Brien", 'Okafor', 'Park', 'Patel', 'Petrov', 'Rossi', 'Santos', 'Schmidt', 'Silva', 'Singh', 'Smith', 'Suzuki', 'Tanaka', 'Taylor', 'Torres', 'Virtanen', 'Walker', 'Weber', 'Wilson', 'Wong', 'Yilmaz', 'Zhang'];
// Real name lists are long-tailed: most surnames are rare. Syllables make that tail.
const SYLLABLES = ['ber', 'cal', 'dor', 'fen', 'gar', 'hol', 'kin', 'lan', 'mar', 'nor', 'pel', 'quist', 'ros', 'sten', 'tor', 'val', 'wick', 'zel'];
const COMPANY_A = ['Blue', 'Bright', 'Cedar', 'Clear', 'Copper', 'Delta', 'Green', 'Harbor', 'Iron', 'Lumen', 'North', 'Oak', 'Pine', 'Quartz', 'River', 'Silver', 'Summit', 'Sun', 'Vertex', 'West'];
const COMPANY_B = ['Analytics', 'Bakery', 'Builders', 'Consulting', 'Design', 'Dynamics', 'Foods', 'Health', 'Labs', 'Logistics', 'Media', 'Motors', 'Partners', 'Robotics', 'Studio', 'Systems', 'Textiles', 'Travel', 'Ventures', 'Works'];
const SUFFIX = ['', ' Ltd', ' Inc', ' GmbH', ' LLC', ' & Co'];
// Reserved names only (RFC 2606): seeded data must never reach a real mailbox.
const MAIL_DOMAINS = ['example.com', 'example.net', 'example.org', 'mail.example'];
export const PRODUCTS = ['website redesign', 'annual retainer', 'photo shoot', 'catering', 'consulting package', 'support plan', 'workshop', 'migration project'];
export const STAGES = ['Lead in', 'Qualified', 'Proposal', 'Negotiation', 'Closing'];
export const TOPICS = ['Pricing', 'Support', 'Partnership', 'Other'];
export const REFERRERS = ['https://www.google.com/', 'https://duckduckgo.com/', 'https://www.linkedin.com/'];
export const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0',
];

export type Random = () => number;

/** mulberry32: small, fast, seedable; plenty for test data. */
export function rng(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
export const weighted = <T extends string>(random: Random, table: [T, number][]): T => {
  let r = random() * table.reduce((sum, [, w]) => sum + w, 0);
  for (const [value, weight] of table) if ((r -= weight) < 0) return value;
  return table[table.length - 1]![0];
};
export const money = (random: Random, min: number, max: number) => Math.round(Math.exp(Math.log(min) + random() * Math.log(max / min)) * 100) / 100;
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '');
export const DAY = 86_400_000;
export const utcDay = (ms: number) => new Date(Math.floor(ms / DAY) * DAY);

export type Person = { firstName: string; lastName: string | null; email: string | null; phone: string | null; company: string | null };

/** Contact number `i`, the same every time it is asked for (submissions repeat their contact's data). */
export function person(seed: number, i: number): Person & { contactType: ContactType; source: ContactSource } {
  const random = rng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + i);
  const firstName = pick(random, FIRST);
  const lastName = random() < 0.6 ? pick(random, LAST) : cap(pick(random, SYLLABLES) + pick(random, SYLLABLES) + pick(random, ['', 'son', 'er', 'ov', 'a']));
  const company = random() < 0.7 ? `${pick(random, COMPANY_A)} ${pick(random, COMPANY_B)}${pick(random, SUFFIX)}` : null;
  const f = slug(firstName);
  const l = slug(lastName);
  const local = pick(random, [`${f}.${l}`, `${f[0]}${l}`, `${f}${l[0]}`, `${f}_${l}`, f]);
  const domain = company && random() < 0.6 ? `${slug(company.split(' ').slice(0, 2).join(''))}.example` : pick(random, MAIL_DOMAINS);
  return {
    firstName,
    lastName: random() < 0.95 ? lastName : null,
    company,
    // The index keeps addresses unique, so submissions find their own contact.
    email: random() < 0.92 ? `${local}${i}@${domain}` : null,
    phone: random() < 0.6 ? `+1 ${200 + Math.floor(random() * 700)} 555 01${String(Math.floor(random() * 100)).padStart(2, '0')}` : null,
    contactType: weighted(random, [[ContactType.lead, 45], [ContactType.client, 30], [ContactType.past_client, 15], [ContactType.vendor, 5], [ContactType.other, 5]]),
    source: weighted(random, [[ContactSource.website, 35], [ContactSource.referral, 20], [ContactSource.social_media, 15], [ContactSource.advertising, 10], [ContactSource.cold_outreach, 10], [ContactSource.repeat_client, 5], [ContactSource.other, 5]]),
  };
}

const cap = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** UUIDv7 for `ms`, like the database's own ids: time-ordered, so bulk rows index like real ones. */
export function uuidv7(ms: number): string {
  const bytes = randomFillSync(new Uint8Array(16));
  for (let i = 5, t = ms; i >= 0; i--, t = Math.floor(t / 256)) bytes[i] = t % 256;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A company of the bench vocabulary, the `n`th of its account: its name and a unique reserved domain. */
export function benchCompany(random: Random, n: number): { name: string; domain: string | null } {
  const name = `${pick(random, COMPANY_A)} ${pick(random, COMPANY_B)}${pick(random, SUFFIX)}`;
  return { name, domain: random() < 0.8 ? `${slug(name)}${n}.example` : null };
}
