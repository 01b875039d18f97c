import { Inject, Injectable, Logger } from '@nestjs/common';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { isStorableId, Limits } from '#contracts';
import type { ApiConfig } from '../config.js';
import { AuthUnavailableError, UnauthorizedError } from '../common/errors.js';
import { API_CONFIG } from '../common/tokens.js';
import type { Principal } from './principal.js';

/** Development tokens are signed with a shared secret; nothing else is accepted with it. */
const SECRET_ALGORITHMS = ['HS256'];
/** An identity provider signs with its private key; symmetric algorithms are refused with a JWKS. */
const JWKS_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
/** Clock skew tolerated between the token issuer and this host. */
const CLOCK_TOLERANCE_S = 30;

/**
 * Verified tokens are remembered so a client polling with one token pays for the signature check
 * once, not on every call (it was the api's largest cost in the relay benchmark). An entry lives
 * at most this long, and never past the token's own expiry, so a key rotation is honoured soon.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;
/** Bounds the cache's memory: beyond it the oldest entries go first. */
const VERIFIED_TOKENS_MAX = 10_000;

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;

/** Verifies bearer tokens and turns them into principals. */
@Injectable()
export class AuthService {
  private readonly log = new Logger(AuthService.name);
  private readonly key: Uint8Array | JWTVerifyGetKey;
  private readonly algorithms: string[];
  /** token → principal and until when the entry may be used; Map order is insertion order. */
  private readonly verified = new Map<string, { principal: Principal; until: number }>();

  constructor(@Inject(API_CONFIG) private readonly config: ApiConfig) {
    const source = config.jwt.key;
    if (source.kind === 'secret') {
      this.key = new TextEncoder().encode(source.secret);
      this.algorithms = SECRET_ALGORITHMS;
    } else {
      // jose caches the key set and refetches it when a token names an unknown key id.
      this.key = createRemoteJWKSet(new URL(source.url));
      this.algorithms = JWKS_ALGORITHMS;
    }
  }

  /** The principal of an `Authorization` header value; UnauthorizedError for anything else. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const token = authorization ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token) throw new UnauthorizedError('Missing or malformed bearer token.');
    const now = Date.now();
    const cached = this.verified.get(token);
    if (cached && cached.until > now) return cached.principal;
    if (cached) this.verified.delete(token);
    const principal = await this.verifyPrincipal(token);
    this.remember(token, principal, now);
    return principal;
  }

  /**
   * The principal of a token this replica verified recently and still trusts, without verifying
   * anything: undefined for any other header. Cheap enough for a hook that runs on every request.
   */
  cachedPrincipal(authorization: string | undefined): Principal | undefined {
    const token = authorization ? BEARER.exec(authorization)?.[1] : undefined;
    const cached = token ? this.verified.get(token) : undefined;
    return cached && cached.until > Date.now() ? cached.principal : undefined;
  }

  private remember(token: string, principal: Principal, now: number): void {
    if (this.verified.size >= VERIFIED_TOKENS_MAX) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    this.verified.set(token, {
      principal,
      until: Math.min(now + VERIFIED_TOKEN_TTL_MS, principal.expiresAt + CLOCK_TOLERANCE_S * 1000),
    });
  }

  private async verifyPrincipal(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      ({ payload } = await this.verify(token));
    } catch (error) {
      if (
        error instanceof errors.JWKSTimeout ||
        error instanceof errors.JWKSInvalid ||
        !(error instanceof errors.JOSEError)
      ) {
        // The key set could not be fetched (timeout, refused, bad reply): not the caller's fault.
        this.log.warn(`Key set unavailable: ${(error as Error).message}`);
        throw new AuthUnavailableError();
      }
      throw new UnauthorizedError(`Token rejected: ${error.code}.`);
    }
    const actorId = payload.sub;
    // The subject becomes the actor id in every store, subject-scoped key and audit record: one
    // that cannot be stored as it is (NUL, control characters, lone surrogates, too long) is
    // refused here, never half-way through an action (docs/security.md "Audit").
    if (typeof actorId !== 'string' || !isStorableId(actorId, Limits.ACTOR_ID_MAX_LENGTH)) {
      throw new UnauthorizedError('Token subject missing, too long or not storable.');
    }
    const claim = payload['permissions'];
    const permissions = new Set(
      Array.isArray(claim) ? claim.filter((item): item is string => typeof item === 'string') : [],
    );
    // `exp` is required by verify(), so it is always a number here.
    return { actorId, permissions, expiresAt: (payload.exp ?? 0) * 1000 };
  }

  private verify(token: string) {
    const options = {
      algorithms: this.algorithms,
      issuer: this.config.jwt.issuer,
      audience: this.config.jwt.audience,
      requiredClaims: ['exp', 'sub'],
      clockTolerance: CLOCK_TOLERANCE_S,
    };
    return this.key instanceof Uint8Array
      ? jwtVerify(token, this.key, options)
      : jwtVerify(token, this.key, options);
  }
}
