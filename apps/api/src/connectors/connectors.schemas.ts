import { z } from 'zod';
import { Limits } from '#contracts';
import { labelField, textField } from '../common/fields.js';

/** Body of POST /api/v1/edge-agents/connectors (unknown fields refused). */
export const enrollSchema = z.strictObject({
  name: labelField(Limits.NAME_MAX_LENGTH),
  device: textField(Limits.DEVICE_MAX_LENGTH).optional(),
});
export type EnrollInput = z.infer<typeof enrollSchema>;
