#!/usr/bin/env node
// Prints a development bearer token for the api:
//   npm run token -- --sub <user> [--perm <permission>...] [--ttl 3600] [--iss <issuer>] [--aud <audience>]
// Signed HS256 with TETHER_JWT_SECRET, or with the development stack's default secret.
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';

const DEV_SECRET = 'tether-dev-secret-change-me';
const ALL_PERMISSIONS = ['ai.access.use', 'connectors:update', 'files.read', 'files.upload'];
/** The api's limit on `sub` (ACTOR_ID_MAX_LENGTH in libs/contracts/src/limits.ts). */
const SUB_MAX_LENGTH = 32;
const DEFAULT_TTL_S = 3600;
/** A development token should not outlive a working week. */
const MAX_TTL_S = 7 * 24 * 3600;

function fail(message) {
  process.stderr.write(`token: ${message}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      sub: { type: 'string' },
      perm: { type: 'string', multiple: true },
      ttl: { type: 'string' },
      iss: { type: 'string' },
      aud: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (error) {
  fail(error.message);
}

const sub = values.sub;
if (!sub || sub.length > SUB_MAX_LENGTH) fail(`--sub is required, 1-${SUB_MAX_LENGTH} characters`);
const ttl = values.ttl === undefined ? DEFAULT_TTL_S : Number(values.ttl);
if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_S)
  fail(`--ttl must be an integer 1..${MAX_TTL_S} (seconds)`);
const permissions = values.perm ?? ALL_PERMISSIONS;
for (const permission of permissions) {
  if (!ALL_PERMISSIONS.includes(permission))
    fail(`unknown permission ${permission} (known: ${ALL_PERMISSIONS.join(', ')})`);
}

let secret = process.env.TETHER_JWT_SECRET;
if (!secret) {
  secret = DEV_SECRET;
  process.stderr.write('token: TETHER_JWT_SECRET is not set; signing with the development secret.\n');
}

const jwt = new SignJWT({ permissions })
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setSubject(sub)
  .setIssuedAt()
  .setExpirationTime(Math.floor(Date.now() / 1000) + ttl);
// Needed when the api is configured with TETHER_JWT_ISSUER / TETHER_JWT_AUDIENCE.
if (values.iss) jwt.setIssuer(values.iss);
if (values.aud) jwt.setAudience(values.aud);
const token = await jwt.sign(new TextEncoder().encode(secret));
process.stdout.write(`${token}\n`);
