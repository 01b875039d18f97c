import { createHmac, randomFillSync, type KeyObject } from 'node:crypto';
import { deriveKey, gcmOpen, gcmSeal, GCM_NONCE_BYTES, GCM_TAG_BYTES } from '#messaging';

/**
 * Encryption of history at rest (reference §4 "Encryption"): AES-256-GCM with the row's scope
 * as associated data, so a ciphertext copied to another row, session, owner or column fails to
 * decrypt instead of showing one user's history to another.
 *
 * Stored bytes: FORMAT_VERSION (1 byte) | nonce (12) | ciphertext | tag (16). The version byte
 * lets a later key or algorithm live beside this one during a rotation (docs/contract.md).
 */
const FORMAT_VERSION = 1;
const NONCE_BYTES = GCM_NONCE_BYTES;
/** Nonces drawn per refill of the random pool (3 KiB). */
const NONCE_POOL_SIZE = 256;
const TAG_BYTES = GCM_TAG_BYTES;
/** HKDF context of key version 1; a new context derives an unrelated key from the same secret. */
const KEY_CONTEXT_V1 = 'tether-history-at-rest-v1';
/** HKDF context of the digest key: change detection must not reuse the encryption key. */
const DIGEST_CONTEXT_V1 = 'tether-history-digest-v1';
/** Fixed salt: the secret is already high-entropy; the context separates uses. */
const KEY_SALT = 'tether-history';

/** A stored value that does not decrypt under this key and scope. Never retried. */
export class HistoryDecryptError extends Error {
  constructor(aad: string) {
    // The scope names ids only; it is safe to log.
    super(`Stored history for ${aad} does not decrypt under this key and scope.`);
    this.name = 'HistoryDecryptError';
  }
}

/** Where a stored value belongs; every id part is bounded and has no '/'. */
export interface CipherScope {
  ownerId: string;
  accessId: string;
  edgeId: bigint | string;
  sessionId: string;
}

/** The associated data of each kind of stored value (reference §4: `owner/access/edge/session`). */
export const Aad = {
  payload: (s: CipherScope) => `${s.ownerId}/${s.accessId}/${String(s.edgeId)}/${s.sessionId}`,
  summary: (s: CipherScope) => `${Aad.payload(s)}/summary`,
  title: (s: CipherScope) => `${Aad.payload(s)}/title`,
  page: (s: CipherScope, window: number) => `${Aad.payload(s)}/page/${window}`,
  journal: (s: CipherScope, epoch: string, revision: bigint) =>
    `${Aad.payload(s)}/journal/${epoch}/${revision}`,
  /** A render item of the reduced journal state; the id is bounded and '/'-free by construction. */
  item: (s: CipherScope, itemId: string) => `${Aad.payload(s)}/item/${itemId}`,
};

export class HistoryCipher {
  private readonly key: KeyObject;
  private readonly digestKey: KeyObject;
  // Nonces come from a pool of random bytes refilled 256 nonces at a time: one randomFillSync per
  // encrypt was ~7 % of history's CPU in the B4 profile. Every nonce is still 12 fresh random
  // bytes used once (the pool's bytes are never handed out twice), read synchronously by the
  // cipher before the pool can be refilled.
  private readonly nonces = Buffer.alloc(NONCE_BYTES * NONCE_POOL_SIZE);
  private nonceOffset = this.nonces.length;

  constructor(secret: string) {
    this.key = deriveKey(secret, KEY_SALT, KEY_CONTEXT_V1);
    this.digestKey = deriveKey(secret, KEY_SALT, DIGEST_CONTEXT_V1);
  }

  /**
   * A keyed digest (HMAC-SHA256, hex) of a stored value under its scope: equal values compare
   * equal without decryption, and nobody without the key can confirm a guessed plaintext.
   */
  digest(plaintext: string, aad: string): string {
    return createHmac('sha256', this.digestKey).update(aad).update('\0').update(plaintext).digest('hex');
  }

  encrypt(plaintext: string, aad: string): Uint8Array<ArrayBuffer> {
    const nonce = this.nextNonce();
    const { body, tag } = gcmSeal(this.key, nonce, plaintext, aad);
    const out = new Uint8Array(1 + NONCE_BYTES + body.length + TAG_BYTES);
    out[0] = FORMAT_VERSION;
    out.set(nonce, 1);
    out.set(body, 1 + NONCE_BYTES);
    out.set(tag, 1 + NONCE_BYTES + body.length);
    return out;
  }

  private nextNonce(): Buffer {
    if (this.nonceOffset + NONCE_BYTES > this.nonces.length) {
      randomFillSync(this.nonces);
      this.nonceOffset = 0;
    }
    const nonce = this.nonces.subarray(this.nonceOffset, this.nonceOffset + NONCE_BYTES);
    this.nonceOffset += NONCE_BYTES;
    return nonce;
  }

  decrypt(stored: Uint8Array, aad: string): string {
    if (stored.length < 1 + NONCE_BYTES + TAG_BYTES || stored[0] !== FORMAT_VERSION) {
      throw new HistoryDecryptError(aad);
    }
    const nonce = stored.subarray(1, 1 + NONCE_BYTES);
    const body = stored.subarray(1 + NONCE_BYTES, stored.length - TAG_BYTES);
    const tag = stored.subarray(stored.length - TAG_BYTES);
    const plaintext = gcmOpen(this.key, nonce, body, tag, aad);
    if (plaintext === undefined) throw new HistoryDecryptError(aad);
    return plaintext;
  }

  encryptJson(value: unknown, aad: string): Uint8Array<ArrayBuffer> {
    return this.encrypt(JSON.stringify(value), aad);
  }

  decryptJson<T>(stored: Uint8Array, aad: string): T {
    return JSON.parse(this.decrypt(stored, aad)) as T;
  }
}
