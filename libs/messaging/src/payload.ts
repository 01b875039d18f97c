import type { z } from 'zod';
import { InvalidPayloadError } from './rpc-errors.js';

/** Validates an incoming NATS payload against its contract schema, once, at the boundary. */
export function parsePayload<S extends z.ZodType>(subject: string, schema: S, payload: unknown): z.infer<S> {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new InvalidPayloadError(subject, issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid');
}
