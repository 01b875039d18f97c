import { jest } from '@jest/globals';
import { SignJWT } from 'jose';
import type { ApiConfig } from '../config.js';
import { UnauthorizedError } from '../common/errors.js';
import { AuthService } from './auth.service.js';

const SECRET = 'unit-test-secret-0123456789';
const config: ApiConfig = {
  nats: { servers: ['nats://127.0.0.1:4222'] },
  namespace: 'tether',
  logLevel: 'log',
  http: { host: '127.0.0.1', port: 0 },
  jwt: { key: { kind: 'secret', secret: SECRET } },
};

async function token(sub: string, expiresInSeconds: number): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ permissions: ['ai.access.use'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt(now)
    .setExpirationTime(now + expiresInSeconds)
    .sign(new TextEncoder().encode(SECRET));
}

afterEach(() => jest.useRealTimers());

test('a remembered token is still refused once it has expired', async () => {
  jest.useFakeTimers({ now: Date.now() });
  const auth = new AuthService(config);
  const bearer = `Bearer ${await token('alice', 5)}`;
  expect((await auth.authenticate(bearer)).actorId).toBe('alice');
  // Within its lifetime the same token keeps working (served from the cache or verified again).
  expect((await auth.authenticate(bearer)).actorId).toBe('alice');
  // Past expiry plus the clock tolerance the cache must not vouch for it any more.
  jest.setSystemTime(Date.now() + 40_000);
  await expect(auth.authenticate(bearer)).rejects.toBeInstanceOf(UnauthorizedError);
});

test('a token with a bad signature is never accepted, even after a good one', async () => {
  const auth = new AuthService(config);
  const good = await token('bob', 60);
  await auth.authenticate(`Bearer ${good}`);
  const forged = good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  await expect(auth.authenticate(`Bearer ${forged}`)).rejects.toBeInstanceOf(UnauthorizedError);
});

test.each([
  ['a NUL byte', 'ali\u0000ce'],
  ['a control character', 'alice\u001b[31m'],
  ['a line break', 'alice\nadmin'],
  ['a lone surrogate', 'alice\ud800'],
  ['33 characters', 'a'.repeat(33)],
  ['nothing', ''],
])('a validly signed token whose sub holds %s is refused at the door', async (_what, sub) => {
  const auth = new AuthService(config);
  await expect(auth.authenticate(`Bearer ${await token(sub, 60)}`)).rejects.toBeInstanceOf(UnauthorizedError);
});
