// The bounded field schemas every internal message is built from, so all of them bound alike.
import { z } from 'zod';
import {
  ACTOR_ID_MAX_LENGTH,
  AGENT_KIND_MAX_LENGTH,
  DEVICE_MAX_LENGTH,
  EDGE_TOKEN_MAX_LENGTH,
  INTERNAL_ID_MAX_LENGTH,
  NAME_MAX_LENGTH,
  PROJECT_MAX_BYTES,
} from '../limits.js';
import { isEdgeId, isOpaqueId } from '../validation/predicates.js';

export const actorIdSchema = z.string().min(1).max(ACTOR_ID_MAX_LENGTH);
export const internalIdSchema = z.string().min(1).max(INTERNAL_ID_MAX_LENGTH);
/** Inside Tether an edge id is a canonical non-zero decimal string (one edge, one subject). */
export const edgeIdSchema = z
  .string()
  .refine(isEdgeId, 'edge_id must be a non-zero canonical decimal uint64');
export const edgeTokenSchema = z.string().min(1).max(EDGE_TOKEN_MAX_LENGTH);
export const nameSchema = z.string().min(1).max(NAME_MAX_LENGTH);
export const deviceSchema = z.string().max(DEVICE_MAX_LENGTH);
export const agentKindSchema = z.string().min(1).max(AGENT_KIND_MAX_LENGTH);
export const projectSchema = z.string().min(1).max(PROJECT_MAX_BYTES);
export const countSchema = z.int().min(0);
/** Milliseconds since the epoch. */
export const timestampSchema = z.number().min(0);

/** The key of a stored session: every part is an id the edge_agent rules already bound. */
export const opaqueIdSchema = z.string().refine(isOpaqueId, 'must be a 32-character id of [A-Za-z0-9_-]');
