import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';

// The one AES-256-GCM primitive Tether seals with (the journal in flight, history at rest):
// each caller owns its byte layout, key ids and errors; this owns the algorithm and its sizes,
// so both stay on the same audited settings.

export const GCM_NONCE_BYTES = 12;
export const GCM_TAG_BYTES = 16;
const KEY_BYTES = 32;

/** The raw 32-byte key HKDF-SHA256 derives from `secret`; `context` separates unrelated uses. */
export function deriveRawKey(secret: string, salt: string, context: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, context, KEY_BYTES));
}

/**
 * A KeyObject, made once per key: a raw Buffer key is re-validated on every cipher (a thrown and
 * caught check inside node:crypto), which history's ingest profile showed at ~8 % CPU.
 */
export function deriveKey(secret: string, salt: string, context: string): KeyObject {
  return createSecretKey(deriveRawKey(secret, salt, context));
}

export interface GcmSealed {
  body: Buffer;
  tag: Buffer;
}

/** Encrypts `plaintext` with `aad` bound in; `nonce` must never be used twice with this key. */
export function gcmSeal(key: KeyObject, nonce: Uint8Array, plaintext: string, aad: string): GcmSealed {
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { body, tag: cipher.getAuthTag() };
}

/** The plaintext, or undefined when the key, nonce, tag or associated data do not match. */
export function gcmOpen(
  key: KeyObject,
  nonce: Uint8Array,
  body: Uint8Array,
  tag: Uint8Array,
  aad: string,
): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
