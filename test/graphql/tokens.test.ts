import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { createTestApp, TEST_SECRET, type GqlResult, type TestApp } from '../helpers/app.js';

// docs/decisions.md §9: /graphql has the same authentication as REST; every bad token is UNAUTHENTICATED.

const ME = '{ me { id } }';
const ISSUER = 'https://id.example.test';

let t: TestApp;
let strict: TestApp;
const sub = randomUUID();

beforeAll(async () => {
  [t, strict] = await Promise.all([createTestApp(), createTestApp({ env: { AUTH_JWT_ISSUER: ISSUER } })]);
});
afterAll(async () => {
  await Promise.all([t?.close(), strict?.close()]);
});

const withAuthorization = (app: TestApp, authorization: string) => app.gql(ME, {}, { headers: { authorization } });
const expectUnauthenticated = (result: GqlResult) => {
  expect(result.errors?.map((e) => e.extensions?.code)).toEqual(['UNAUTHENTICATED']);
  expect(Object.values(result.data ?? {})).toEqual([null]); // the refused root field is null (decisions §9 amended)
};

describe('token failures on /graphql', () => {
  test('a valid token is answered (the baseline the refusals below differ from)', async () => {
    const result = await withAuthorization(t, `Bearer ${await mintToken(TEST_SECRET, { sub })}`);
    expect(result.errors).toBeUndefined();
    expect(result.data.me.id).toBe(sub);
  });

  test('no token is UNAUTHENTICATED', async () => {
    expectUnauthenticated(await t.gql(ME));
  });

  test('a malformed token is UNAUTHENTICATED', async () => {
    expectUnauthenticated(await withAuthorization(t, 'Bearer not.a-jwt'));
  });

  test('a token signed with another secret is UNAUTHENTICATED', async () => {
    expectUnauthenticated(await withAuthorization(t, `Bearer ${await mintToken('another-secret-another-secret-0123456789', { sub })}`));
  });

  test('an expired token is UNAUTHENTICATED', async () => {
    const expired = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(sub)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(TEST_SECRET));
    expectUnauthenticated(await withAuthorization(t, `Bearer ${expired}`));
  });

  test('with AUTH_JWT_ISSUER set, a token from another issuer is UNAUTHENTICATED and one from it is accepted', async () => {
    expectUnauthenticated(await withAuthorization(strict, `Bearer ${await mintToken(TEST_SECRET, { sub, issuer: 'https://other.test' })}`));
    const right = await withAuthorization(strict, `Bearer ${await mintToken(TEST_SECRET, { sub, issuer: ISSUER })}`);
    expect(right.data?.me.id).toBe(sub);
  });

  test('an unsigned token (alg none) is UNAUTHENTICATED', async () => {
    const unsecured = new UnsecuredJWT({}).setSubject(sub).setExpirationTime('1h').encode();
    expectUnauthenticated(await withAuthorization(t, `Bearer ${unsecured}`));
  });
});
