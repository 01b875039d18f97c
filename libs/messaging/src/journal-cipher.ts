import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { EdgeAgentResult, JournalEntry, SealedJournalEntry } from '#contracts';
import { deriveRawKey, gcmOpen, gcmSeal, GCM_NONCE_BYTES, GCM_TAG_BYTES } from './aes-gcm.js';

/**
 * Conversation content on the JetStream journal (docs/security.md "Content encryption"): the
 * snapshot of every edge-update row is AES-256-GCM sealed by the router (the journal's only
 * writer) and opened by its readers (history, the router's lifecycle). The row's ids and
 * positions are the associated data, so a sealed snapshot copied to another session, owner,
 * edge or position does not open, and a row forged without the key is refused.
 *
 * Sealed bytes (base64 on the wire): FORMAT_VERSION (1) | key id (4) | nonce (12) | ciphertext |
 * tag (16). The key id names which configured key sealed it, so readers hold the previous keys
 * during a rotation and open rows of both.
 */
const FORMAT_VERSION = 1;
const KEY_ID_BYTES = 4;
const HEADER_BYTES = 1 + KEY_ID_BYTES + GCM_NONCE_BYTES;
/** HKDF context: the journal key is unrelated to any other key made from the same secret. */
const KEY_CONTEXT_V1 = 'tether-journal-in-flight-v1';
const KEY_ID_CONTEXT = 'tether-journal-key-id';
/** Fixed salt: the secret is high-entropy (at least 32 characters); the context separates uses. */
const KEY_SALT = 'tether-journal';

/** A sealed snapshot that does not open under any configured key and this row's ids. Never retried. */
export class JournalSealError extends Error {
  constructor(aad: string) {
    // The associated data names ids and positions only; it is safe to log.
    super(`Journal row ${aad} does not open under the configured journal keys`);
    this.name = 'JournalSealError';
  }
}

interface JournalKey {
  id: Buffer;
  key: KeyObject;
}

function journalKeyOf(secret: string): JournalKey {
  const raw = deriveRawKey(secret, KEY_SALT, KEY_CONTEXT_V1);
  const id = createHmac('sha256', raw).update(KEY_ID_CONTEXT).digest().subarray(0, KEY_ID_BYTES);
  return { id, key: createSecretKey(raw) };
}

/** The associated data of a row: every id and position that places it. */
function rowAad(row: Omit<JournalEntry, 'snapshot'> | SealedJournalEntry): string {
  return [row.session_id, row.edge_id, row.actor_id, row.access_id ?? '', row.epoch, row.revision].join('/');
}

export class JournalCipher {
  private readonly current: JournalKey;
  private readonly readable: JournalKey[];

  /**
   * `secret` seals every new row; `previous` secrets only open rows sealed before a rotation
   * (keep them until the stream's retention has dropped those rows).
   */
  constructor(secret: string, previous: readonly string[] = []) {
    this.current = journalKeyOf(secret);
    this.readable = [this.current, ...previous.map(journalKeyOf)];
  }

  /** The row as it is stored: the snapshot replaced by its sealed form. */
  seal(entry: JournalEntry): SealedJournalEntry {
    const { snapshot, ...row } = entry;
    const nonce = randomBytes(GCM_NONCE_BYTES);
    const { body, tag } = gcmSeal(this.current.key, nonce, JSON.stringify(snapshot), rowAad(row));
    const sealed = Buffer.concat([Buffer.from([FORMAT_VERSION]), this.current.id, nonce, body, tag]);
    return { ...row, sealed_snapshot: sealed.toString('base64') };
  }

  /**
   * The row with its snapshot opened. The snapshot is parsed JSON, not yet validated: the caller
   * checks it with the contract's schema like any other message.
   */
  open(row: SealedJournalEntry): Omit<JournalEntry, 'snapshot'> & { snapshot: unknown } {
    const aad = rowAad(row);
    const stored = Buffer.from(row.sealed_snapshot, 'base64');
    if (stored.length < HEADER_BYTES + GCM_TAG_BYTES || stored[0] !== FORMAT_VERSION) {
      throw new JournalSealError(aad);
    }
    const keyId = stored.subarray(1, 1 + KEY_ID_BYTES);
    const key = this.readable.find((candidate) => timingSafeEqual(candidate.id, keyId));
    if (!key) throw new JournalSealError(aad);
    const nonce = stored.subarray(1 + KEY_ID_BYTES, HEADER_BYTES);
    const body = stored.subarray(HEADER_BYTES, stored.length - GCM_TAG_BYTES);
    const tag = stored.subarray(stored.length - GCM_TAG_BYTES);
    const plaintext = gcmOpen(key.key, nonce, body, tag, aad);
    if (plaintext === undefined) throw new JournalSealError(aad);
    const { sealed_snapshot: _sealed, ...rest } = row;
    return { ...rest, snapshot: JSON.parse(plaintext) as EdgeAgentResult };
  }
}
