// The edge's replies in one pass: the same bytes as `encodeJson(toWire(value))` (proto3 JSON:
// default-valued fields omitted), without building the trimmed copy first. toWire plus the
// encode was ~13 % of the edge's CPU per poll in the B1 profile; here JSON.stringify trims while
// it walks the value anyway.

/** Fields declared `optional` in edge_agent.proto: 0 is a real value (as in libs/contracts wire.ts). */
const PRESENCE_FIELDS: ReadonlySet<string> = new Set([
  'dispatch_ms',
  'first_reply_ms',
  'finished_ms',
  'exit_code',
  'request_service_ms',
]);

const encoder = new TextEncoder();

function isDefault(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (PRESENCE_FIELDS.has(key)) return false;
  if (value === false || value === '' || value === 0) return true;
  return Array.isArray(value) && value.length === 0;
}

/** `encodeJson(toWire(value))` for the plain JSON values results are made of (no toJSON). */
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
