// The JSON Schema type and the bounded-string builders every edge_agent schema module shares.
import { Limits } from '#contracts';

/** A JSON Schema object; the document is plain data. */
export type Schema = { [keyword: string]: unknown };

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** C0, DEL and C1 control characters, as the contract's hasControlChars refuses them. */
export const CONTROL = '\\u0000-\\u001F\\u007F-\\u009F';
export const NO_CONTROL = `^[^${CONTROL}]*$`;
/** No control characters and at least one non-whitespace character (not blank after trim()). */
export const NON_BLANK_LINE = `^[^${CONTROL}]*[^\\s${CONTROL}][^${CONTROL}]*$`;
/** The alphabet of ids Tether mints (contract isOpaqueId): subject- and key-safe. */
const OPAQUE_ID = `^[0-9A-Za-z_-]{${Limits.OPAQUE_ID_LENGTH}}$`;
/** Standard base64, padding optional (contract base64DecodedLength). */
export const BASE64 = '^[A-Za-z0-9+/]*={0,2}$';
export const BASE64_CHUNK_MAX_CHARS = Math.ceil(Limits.FILE_CHUNK_MAX_BYTES / 3) * 4;
/** Decimal digits of the largest history page, to bound the pattern. */
export const HISTORY_PAGE_DIGITS = String(Limits.HISTORY_PAGE_MAX).length;
/** 2^63 − 1 has 19 digits. */
export const INT63_DIGITS = 19;

/**
 * A string bounded in UTF-8 bytes. JSON Schema counts characters, which never exceed the bytes,
 * so `maxLength` is a sound first bound and `x-max-bytes` states the real one.
 */
export function boundedBytes(max: number, description: string, extra: Schema = {}): Schema {
  return {
    type: 'string',
    maxLength: max,
    'x-max-bytes': max,
    description: `${description} At most ${max} UTF-8 bytes.`,
    ...extra,
  };
}

export function opaqueId(description: string): Schema {
  return {
    type: 'string',
    minLength: Limits.OPAQUE_ID_LENGTH,
    maxLength: Limits.OPAQUE_ID_LENGTH,
    pattern: OPAQUE_ID,
    description: `${description} Exactly ${Limits.OPAQUE_ID_LENGTH} characters of [0-9A-Za-z_-].`,
  };
}

export const fileOffset = (description: string): Schema => ({
  type: 'integer',
  minimum: 0,
  maximum: Limits.FILE_SIZE_MAX_BYTES,
  description,
});
