import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { Limits } from '#contracts';
import type { ApiError } from './errors.js';

// Bodies are buffered by a catch-all content-type parser that never fails, and decoded later by a
// pipe. That keeps the reference check order (authenticate, then permissions, then the body,
// reference §2.1): a parser error would be answered by Fastify before any guard runs.

/** What the parser leaves on `request.body`. */
export type RawBody = { kind: 'raw'; contentType: string; bytes: Buffer } | { kind: 'too_large' };

export function isRawBody(value: unknown): value is RawBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    ((value as RawBody).kind === 'raw' || (value as RawBody).kind === 'too_large')
  );
}

function readBounded(stream: Readable, declaredLength: number, limit: number): Promise<RawBody | Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength > limit) {
      resolve({ kind: 'too_large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        // The remainder is discarded; the filter closes the connection after answering.
        stream.resume();
        resolve({ kind: 'too_large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
  });
}

/** Replaces Fastify's body parsers with one that buffers at most HTTP_BODY_LIMIT_BYTES. */
export function registerRawBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', async (request: FastifyRequest, payload: Readable): Promise<RawBody> => {
    const declared = Number(request.headers['content-length'] ?? 0);
    const read = await readBounded(
      payload,
      Number.isFinite(declared) ? declared : 0,
      Limits.HTTP_BODY_LIMIT_BYTES,
    );
    if (!Buffer.isBuffer(read)) return read;
    return { kind: 'raw', contentType: request.headers['content-type'] ?? '', bytes: read };
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const JSON_MEDIA_TYPE = /^application\/json\s*(;.*)?$/i;

export type DecodedBody = { ok: true; value: unknown } | { ok: false };

/**
 * The one JSON value of a body; not ok when the body is missing, too large, not
 * `application/json`, not UTF-8, not JSON, or holds more than one value (JSON.parse refuses
 * trailing data).
 */
export function decodeJsonBody(body: unknown): DecodedBody {
  if (!isRawBody(body) || body.kind !== 'raw') return { ok: false };
  if (!JSON_MEDIA_TYPE.test(body.contentType)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(utf8.decode(body.bytes)) as unknown };
  } catch {
    return { ok: false };
  }
}

/** `@Body(new JsonBodyPipe(schema, () => new SomeError()))`: one strict decode per request. */
export class JsonBodyPipe<T> implements PipeTransform<unknown, T> {
  constructor(
    private readonly schema: z.ZodType<T>,
    private readonly invalid: () => ApiError,
  ) {}

  transform(body: unknown): T {
    const decoded = decodeJsonBody(body);
    if (!decoded.ok) throw this.invalid();
    const parsed = this.schema.safeParse(decoded.value);
    if (!parsed.success) throw this.invalid();
    return parsed.data;
  }
}
