import { z } from 'zod';
import { Limits } from '#contracts';

/** Body of POST /api/v1/console/dev-token: the user to sign in as (a token `sub`). */
export const devTokenSchema = z.strictObject({
  sub: z
    .string()
    .min(1)
    .max(Limits.ACTOR_ID_MAX_LENGTH)
    .regex(/^[A-Za-z0-9._@-]+$/),
});
export type DevTokenInput = z.infer<typeof devTokenSchema>;
