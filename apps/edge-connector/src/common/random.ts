import { createHash, randomBytes } from 'node:crypto';

/** Opaque ids (sessions, approval and input views) are 16 random bytes as 32 hex characters. */
export function randomId(): string {
  return randomBytes(16).toString('hex');
}

/** A stable public id: the first 16 bytes of sha256 over the NUL-joined parts, as hex. */
export function hashId(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32);
}
