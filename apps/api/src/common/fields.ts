import { z } from 'zod';

// Field rules shared by the api's own bodies (accesses, enrollment). The edge request itself is
// decoded by the contract's schema.

/** C0, DEL and C1 control characters: never part of a name, path or label. */
function hasControlCharacter(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}
const UINT64_MAX = 2n ** 64n - 1n;

function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** A non-blank single-line label of at most `maxLength` characters (UTF-16 units, as zod counts). */
export const labelField = (maxLength: number) =>
  z
    .string()
    .max(maxLength)
    .refine((value) => value.trim().length > 0, 'must not be blank')
    .refine((value) => !hasControlCharacter(value), 'must not contain control characters');

/** A non-empty string without control characters, at most `maxBytes` UTF-8 bytes. */
export const textField = (maxBytes: number) =>
  z
    .string()
    .min(1)
    .max(maxBytes)
    .refine((value) => byteLength(value) <= maxBytes, `must be at most ${maxBytes} bytes`)
    .refine((value) => !hasControlCharacter(value), 'must not contain control characters');

/** The proto's `uint64 edge_id`: a non-zero decimal string or safe integer, kept as a string. */
export const edgeIdField = z
  .union([z.string().regex(/^[1-9][0-9]{0,19}$/), z.number().int().positive().max(Number.MAX_SAFE_INTEGER)])
  .transform((value) => String(value))
  .refine((value) => BigInt(value) <= UINT64_MAX, 'must fit in 64 bits');
