// proto3 JSON conventions for the edge_agent contract: fields holding their default value are
// omitted, except fields declared `optional` in the proto, where 0 is a real value and only a
// missing (null/undefined) value is left out.

/** Fields declared `optional` in edge_agent.proto: presence is tracked, 0 is serialized. */
const PRESENCE_FIELDS: ReadonlySet<string> = new Set([
  'dispatch_ms',
  'first_reply_ms',
  'finished_ms',
  'exit_code',
  'request_service_ms',
]);

function isDefault(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (PRESENCE_FIELDS.has(key)) return false;
  if (value === false || value === '' || value === 0) return true;
  return Array.isArray(value) && value.length === 0;
}

/** A copy of `value` with default-valued fields removed, recursively. */
export function toWire<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item: unknown) => toWire(item)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (isDefault(key, field)) continue;
    out[key] = typeof field === 'object' ? toWire(field) : field;
  }
  return out as T;
}

const encoder = new TextEncoder();

/**
 * `toWire(value)` as UTF-8 JSON in one pass, without building the trimmed copy first: the edge
 * encodes every reply with it (toWire plus the encode was ~13 % of the edge's CPU per poll in
 * the B1 profile). For the plain JSON values results are made of (no toJSON).
 */
export function encodeWire(value: unknown): Uint8Array {
  let root = true;
  const json = JSON.stringify(value, function (this: unknown, key: string, field: unknown) {
    // The value itself, and array items, are kept as they are (toWire maps items, never drops).
    if (root) {
      root = false;
      return field;
    }
    if (Array.isArray(this)) return field;
    return isDefault(key, field) ? undefined : field;
  });
  return encoder.encode(json);
}
