// Small string and number predicates the rules and the zod schemas share; no rule lives here.
import { OPAQUE_ID_LENGTH } from '../limits.js';

/** 2^64 − 1 and 2^63 − 1, the largest uint64 and int64 in decimal. */
export const UINT64_MAX_DECIMAL = '18446744073709551615';
export const INT63_MAX_DECIMAL = '9223372036854775807';

/**
 * The value of a decimal digit string without leading zeros, or null when `s` is not one or is
 * greater than `max` (a decimal without leading zeros). Signs, spaces and exponents are refused.
 */
export function significantDigits(s: string, max: string): string | null {
  const n = s.length;
  if (n === 0) return null;
  let start = -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return null;
    if (start === -1 && c !== 48) start = i;
  }
  if (start === -1) return '0';
  const digits = start === 0 ? s : s.slice(start);
  if (digits.length > max.length) return null;
  if (digits.length === max.length && digits > max) return null;
  return digits;
}

/** A decimal uint64 (0 … 2^64−1); leading zeros allowed, as strconv.ParseUint does. */
export function isDecimalUint64(s: string): boolean {
  return significantDigits(s, UINT64_MAX_DECIMAL) !== null;
}

/** The canonical decimal of a uint64 string (leading zeros removed), or null. */
export function normalizeDecimalUint64(s: string): string | null {
  return significantDigits(s, UINT64_MAX_DECIMAL);
}

/**
 * A connector id as Tether keeps it inside: canonical decimal uint64 (no leading zeros, so one
 * edge has one subject), and not 0, which names no connector.
 */
export function isEdgeId(s: string): boolean {
  return s.length > 0 && s.charCodeAt(0) !== 48 && isDecimalUint64(s);
}

/**
 * An opaque id minted by Tether (session, access, installation, skill, approval, input,
 * transfer): exactly 32 characters from a subject- and key-safe alphabet. The reference only
 * checks the length; the alphabet is ours, because session ids end up in NATS subjects and
 * Redis keys, where `.`, `*`, `>`, `{` or spaces would change their meaning.
 */
export function isOpaqueId(s: string): boolean {
  if (s.length !== OPAQUE_ID_LENGTH) return false;
  for (let i = 0; i < OPAQUE_ID_LENGTH; i++) {
    const c = s.charCodeAt(i);
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95;
    if (!ok) return false;
  }
  return true;
}

/** UTF-8 byte length above `max`, without encoding when the code-unit count already decides. */
export function exceedsBytes(s: string, max: number): boolean {
  if (s.length > max) return true;
  if (s.length * 3 <= max) return false;
  return Buffer.byteLength(s, 'utf8') > max;
}

/** Unicode control characters (category Cc: C0, DEL and C1), as Go's unicode.IsControl. */
export function hasControlChars(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/**
 * An identifier every store and log can hold as it is: 1..`maxLength` code units, well-formed
 * UTF-8 (no lone surrogate), no control character (Postgres text refuses NUL; control characters
 * forge log lines). A JWT `sub` is held to it at the door, audit ids before they are recorded.
 */
export function isStorableId(s: string, maxLength: number): boolean {
  return s.length > 0 && s.length <= maxLength && s.isWellFormed() && !hasControlChars(s);
}

/** A JS string is valid UTF-8 exactly when it has no lone surrogate. */
export function isValidUtf8(s: string): boolean {
  return s.isWellFormed();
}

export function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

export function runeCountExceeds(s: string, max: number): boolean {
  if (s.length <= max) return false;
  let runes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by a low one is one rune.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++runes > max) return true;
  }
  return false;
}

function isBase64Char(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
}

/**
 * The decoded size of standard base64 (RFC 4648 §4 alphabet, padding optional, as protobuf JSON
 * accepts), or -1 when `s` is not base64.
 */
export function base64DecodedLength(s: string): number {
  let end = s.length;
  if (end > 0 && s.charCodeAt(end - 1) === 61) end--;
  if (end > 0 && s.charCodeAt(end - 1) === 61) end--;
  const padding = s.length - end;
  for (let i = 0; i < end; i++) {
    if (!isBase64Char(s.charCodeAt(i))) return -1;
  }
  const rest = end % 4;
  if (rest === 1) return -1;
  // Padding, when present, must complete the last quantum exactly.
  if (padding > 0 && (rest === 0 || rest + padding !== 4)) return -1;
  return Math.floor(end / 4) * 3 + (rest === 0 ? 0 : rest - 1);
}
