// Text helpers for display bounds: byte budgets are UTF-8 bytes, and a cut never splits a
// character, so every bounded text is still valid UTF-8.

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The longest prefix of `text` that fits in `maxBytes` UTF-8 bytes. */
export function utf8Head(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  // A string of n UTF-16 units is at most 3n bytes, so short strings skip the encoding.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

/** Counts Unicode code points ("runes"), not UTF-16 units. */
export function runeLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export function runeHead(text: string, maxRunes: number): string {
  return Array.from(text).slice(0, maxRunes).join('');
}

// Control characters (other than newline and tab) and Unicode format characters (bidi overrides,
// zero-width joiners) can disguise what a command or path really is, so display text drops them.
const HIDDEN_CHARACTERS = /[\p{Cc}\p{Cf}]/gu;

export function stripHidden(text: string): string {
  return text.replace(HIDDEN_CHARACTERS, (c) => (c === '\n' || c === '\t' ? c : ''));
}

export function hasControl(text: string): boolean {
  return /\p{Cc}/u.test(text);
}
