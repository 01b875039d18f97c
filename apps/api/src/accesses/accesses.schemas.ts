import { z } from 'zod';
import { Limits, type AccessInput } from '#contracts';
import { edgeIdField, labelField, textField } from '../common/fields.js';

/** The agent kind of the installation (`codex`, ...): a short lowercase identifier. */
const ACCESS_KIND_PATTERN = new RegExp(`^[a-z][a-z0-9_-]{0,${Limits.AGENT_KIND_MAX_LENGTH - 1}}$`);

/** Body of POST and PUT /api/v1/agent-accesses (unknown fields refused). */
export const accessInputSchema: z.ZodType<AccessInput> = z.strictObject({
  name: labelField(Limits.NAME_MAX_LENGTH),
  kind: z.string().regex(ACCESS_KIND_PATTERN),
  edge_id: edgeIdField,
  installation_id: textField(Limits.INSTALLATION_ID_MAX_BYTES),
  project: textField(Limits.PROJECT_MAX_BYTES),
});

/** Saved access ids are opaque: exactly 32 hex characters. */
export const ACCESS_ID_PATTERN = new RegExp(`^[0-9a-f]{${Limits.OPAQUE_ID_LENGTH}}$`);

/** The largest page number accepted; far beyond any real list, small enough for any database. */
export const ACCESSES_PAGE_MAX = 1_000_000;
