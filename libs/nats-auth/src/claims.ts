// NATS decentralised auth (operator → account → users) for Tether: the claims of each JWT, built
// in one place so `npm run nats:setup` and the history service (which re-issues the account JWT
// when it revokes an edge) always produce the same account. docs/security.md explains the keys.
import {
  Algorithms,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  type Account,
  type OperatorLimits,
  type User,
} from '@nats-io/jwt';
import { fromPublic, fromSeed, type KeyPair } from '@nats-io/nkeys';
import type { NatsPermissions } from '#contracts';

/** The account every Tether identity belongs to, and the system account the server needs. */
export const TETHER_ACCOUNT_NAME = 'TETHER';
export const SYSTEM_ACCOUNT_NAME = 'SYS';
export const OPERATOR_NAME = 'tether';

const NS_PER_MS = 1_000_000;

/** The limits every account spells out besides JetStream's: no bounds, no bearer tokens. */
const ACCOUNT_BASE_LIMITS: OperatorLimits = {
  subs: -1,
  data: -1,
  payload: -1,
  imports: -1,
  exports: -1,
  wildcards: true,
  conn: -1,
  leaf: -1,
  disallow_bearer: true,
};

/**
 * Every account limit, spelled out: nats-server treats a missing limit as 0, which shows only as
 * a connection that times out. -1 is "no limit"; the deployment bounds connections and storage
 * on the server itself (docs/security.md "Limits").
 */
const TETHER_ACCOUNT_LIMITS: OperatorLimits = {
  ...ACCOUNT_BASE_LIMITS,
  mem_storage: -1,
  disk_storage: -1,
  streams: -1,
  consumer: -1,
  max_ack_pending: -1,
  mem_max_stream_bytes: -1,
  disk_max_stream_bytes: -1,
  max_bytes_required: false,
};

/** The system account holds no streams: JetStream stays off for it (both storages 0). */
const SYSTEM_ACCOUNT_LIMITS: OperatorLimits = ACCOUNT_BASE_LIMITS;

/** Users carry no byte or subscription limits of their own; the account's apply. */
const USER_LIMITS: Partial<User> = { subs: -1, data: -1, payload: -1 };

export function keyFromSeed(seed: string): KeyPair {
  return fromSeed(new TextEncoder().encode(seed.trim()));
}

export function seedOf(key: KeyPair): string {
  return new TextDecoder().decode(key.getSeed());
}

/** The operator JWT, self-signed, naming its signing key and the system account. */
export function operatorJwt(operator: KeyPair, signingKey: string, systemAccount: string): Promise<string> {
  return encodeOperator(
    OPERATOR_NAME,
    operator,
    { signing_keys: [signingKey], system_account: systemAccount },
    { algorithm: Algorithms.v2 },
  );
}

export interface AccountJwtInput {
  /** The account's public key (A…). */
  account: string;
  /** The operator signing key that signs this JWT. */
  signer: KeyPair;
  /** Public keys of the account signing keys that may sign its users. */
  signingKeys: string[];
  /** User public key → unix seconds: users issued at or before it are refused and disconnected. */
  revocations?: Record<string, number>;
}

export function tetherAccountJwt(input: AccountJwtInput): Promise<string> {
  const account: Partial<Account> = {
    limits: TETHER_ACCOUNT_LIMITS,
    signing_keys: input.signingKeys,
    ...(input.revocations && Object.keys(input.revocations).length > 0 && { revocations: input.revocations }),
  };
  return encodeAccount(TETHER_ACCOUNT_NAME, fromPublic(input.account), account, {
    algorithm: Algorithms.v2,
    signer: input.signer,
  });
}

export function systemAccountJwt(account: string, signer: KeyPair): Promise<string> {
  return encodeAccount(
    SYSTEM_ACCOUNT_NAME,
    fromPublic(account),
    { limits: SYSTEM_ACCOUNT_LIMITS },
    { algorithm: Algorithms.v2, signer },
  );
}

/** The JWT form of a permission table (docs/security.md lists the same tables). */
export function userPermissionClaims(permissions: NatsPermissions): Partial<User> {
  return {
    pub: { allow: permissions.publish.allow, deny: permissions.publish.deny },
    sub: { allow: permissions.subscribe.allow, deny: permissions.subscribe.deny },
    ...(permissions.responses && {
      resp: { max: permissions.responses.max, ttl: permissions.responses.ttlMs * NS_PER_MS },
    }),
  };
}

export interface UserJwtInput {
  name: string;
  /** The user's public key (U…). */
  user: string;
  /** The account the user belongs to (A…). */
  account: string;
  /** An account signing key listed in the account JWT. */
  signer: KeyPair;
  permissions?: NatsPermissions;
  /** Raw claims instead of a permission table (the system user). */
  claims?: Partial<User>;
}

export function userJwt(input: UserJwtInput): Promise<string> {
  const claims: Partial<User> = {
    ...USER_LIMITS,
    ...(input.permissions ? userPermissionClaims(input.permissions) : {}),
    ...input.claims,
  };
  return encodeUser(input.name, fromPublic(input.user), fromPublic(input.account), claims, {
    algorithm: Algorithms.v2,
    signer: input.signer,
  });
}

/** The `.creds` file a NATS client reads: the user JWT and the user's seed. */
export function credsFile(jwt: string, user: KeyPair): string {
  return new TextDecoder().decode(fmtCreds(jwt, user));
}

/**
 * The system user's claims: it may only push account JWTs to the resolver (and read the replies).
 * Pushed JWTs must still be signed by the operator, so these credentials alone change nothing.
 */
export const SYSTEM_PUSH_CLAIMS: Partial<User> = {
  pub: { allow: ['$SYS.REQ.CLAIMS.UPDATE', '$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE'] },
  sub: { allow: ['_INBOX.>'] },
};
