// JSON on the wire, UTF-8 encoded. One encoder/decoder pair per process.
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export class MalformedPayloadError extends Error {
  constructor(subject: string) {
    super(`Payload on ${subject} is not valid JSON.`);
    this.name = 'MalformedPayloadError';
  }
}

export function decodeJson<T = unknown>(data: Uint8Array, subject = 'a subject'): T {
  try {
    return JSON.parse(decoder.decode(data)) as T;
  } catch {
    throw new MalformedPayloadError(subject);
  }
}
