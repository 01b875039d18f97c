// The edge authority's configuration: history alone holds the keys that mint and revoke edge
// NATS users (docs/security.md "Edge credentials"). All four variables or none: without them
// the deployment runs an open NATS (development) and enrollment returns only the edge token.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { keyFromSeed } from '#nats-auth';

export interface EdgeAuthoritySettings {
  /** The Tether account's public key (A…). */
  account: string;
  /** Account signing key seed (SA…): signs edge users. */
  accountSigningSeed: string;
  /** Operator signing key seed (SO…): re-signs the account JWT with its revocation list. */
  operatorSigningSeed: string;
  /** Creds file of the system user that pushes the account JWT to the resolver. */
  systemCredsFile: string;
}

const optional = () => z.preprocess((value) => (value === '' ? undefined : value), z.string().optional());

export const edgeAuthorityEnv = {
  /** The account public key (A…) or the path of a file holding it. */
  TETHER_NATS_ACCOUNT: optional(),
  /** A seed (S…) or the path of a file holding one. */
  TETHER_NATS_ACCOUNT_SIGNING_KEY: optional(),
  TETHER_NATS_OPERATOR_SIGNING_KEY: optional(),
  TETHER_NATS_SYSTEM_CREDS: optional(),
};

interface EdgeAuthorityEnv {
  TETHER_NATS_ACCOUNT?: string;
  TETHER_NATS_ACCOUNT_SIGNING_KEY?: string;
  TETHER_NATS_OPERATOR_SIGNING_KEY?: string;
  TETHER_NATS_SYSTEM_CREDS?: string;
}

const NAMES = Object.keys(edgeAuthorityEnv) as (keyof EdgeAuthorityEnv)[];

/** A seed given inline, or read from the file the value names. Never logged. */
function seedValue(value: string): string | null {
  const inline = value.trim();
  if (/^S[A-Z2-7]{57}$/.test(inline)) return inline;
  try {
    const fromFile = readFileSync(value, 'utf8').trim();
    return /^S[A-Z2-7]{57}$/.test(fromFile) ? fromFile : null;
  } catch {
    return null;
  }
}

/** An account public key given inline, or read from the file the value names. */
function accountValue(value: string): string | null {
  const pattern = /^A[A-Z2-7]{55}$/;
  if (pattern.test(value.trim())) return value.trim();
  try {
    const fromFile = readFileSync(value, 'utf8').trim();
    return pattern.test(fromFile) ? fromFile : null;
  } catch {
    return null;
  }
}

/** The key a seed holds must be of the expected kind (an account or operator key). */
function seedOfKind(value: string, prefix: 'A' | 'O'): string | null {
  const seed = seedValue(value);
  if (!seed) return null;
  try {
    return keyFromSeed(seed).getPublicKey().startsWith(prefix) ? seed : null;
  } catch {
    return null;
  }
}

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

export function checkEdgeAuthorityEnv(env: EdgeAuthorityEnv, ctx: z.RefinementCtx): void {
  const set = NAMES.filter((name) => env[name] !== undefined);
  if (set.length === 0) return;
  for (const name of NAMES.filter((name) => env[name] === undefined)) {
    ctx.addIssue({ code: 'custom', path: [name], message: `must be set with ${set.join(', ')}` });
  }
  if (set.length !== NAMES.length) return;
  const problems: [keyof EdgeAuthorityEnv, boolean, string][] = [
    [
      'TETHER_NATS_ACCOUNT',
      /^A[A-Z2-7]{55}$/.test(env.TETHER_NATS_ACCOUNT!),
      'must be an account public key (A…)',
    ],
    [
      'TETHER_NATS_ACCOUNT_SIGNING_KEY',
      seedOfKind(env.TETHER_NATS_ACCOUNT_SIGNING_KEY!, 'A') !== null,
      'must be an account seed (SA…) or a readable file holding one',
    ],
    [
      'TETHER_NATS_OPERATOR_SIGNING_KEY',
      seedOfKind(env.TETHER_NATS_OPERATOR_SIGNING_KEY!, 'O') !== null,
      'must be an operator seed (SO…) or a readable file holding one',
    ],
    ['TETHER_NATS_SYSTEM_CREDS', readable(env.TETHER_NATS_SYSTEM_CREDS!), 'must name a readable creds file'],
  ];
  for (const [name, ok, message] of problems) {
    if (!ok) ctx.addIssue({ code: 'custom', path: [name], message });
  }
}

/** Null in development (no variable set); checkEdgeAuthorityEnv has vouched for the rest. */
export function edgeAuthoritySettings(env: EdgeAuthorityEnv): EdgeAuthoritySettings | null {
  if (!env.TETHER_NATS_ACCOUNT) return null;
  return {
    account: accountValue(env.TETHER_NATS_ACCOUNT)!,
    accountSigningSeed: seedOfKind(env.TETHER_NATS_ACCOUNT_SIGNING_KEY!, 'A')!,
    operatorSigningSeed: seedOfKind(env.TETHER_NATS_OPERATOR_SIGNING_KEY!, 'O')!,
    systemCredsFile: env.TETHER_NATS_SYSTEM_CREDS!,
  };
}
