// An agent's model list as every driver keeps it [§3 catalogs]: an id that is too long, holds
// control characters or was already listed is skipped; a display name that is unfit falls back to
// the id; a list longer than the bound is refused rather than cut, so no driver shows part of one.
import type { AgentModel } from '#contracts';
import { DriverError } from './agent-driver.js';

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Most models a list may hold [§2.3 models: more than 256 is an error]. */
export const MODELS_MAX = 256;
/** Longest id (UTF-8 bytes), and longest display name (characters). */
export const MODEL_ID_MAX_BYTES = 128;

export class ModelCatalog {
  readonly models: AgentModel[] = [];
  private readonly seen = new Set<string>();

  /** Lists `id`, named `display` when fit; false when the id is unusable or already listed. */
  add(id: string | undefined, display: string | undefined): boolean {
    if (!id || Buffer.byteLength(id) > MODEL_ID_MAX_BYTES || CONTROL_CHARS.test(id) || this.seen.has(id))
      return false;
    this.seen.add(id);
    const name =
      display && display.length <= MODEL_ID_MAX_BYTES && !CONTROL_CHARS.test(display) ? display : id;
    this.models.push({ id, name });
    if (this.models.length > MODELS_MAX)
      throw new DriverError('unavailable', 'The agent lists too many models');
    return true;
  }
}
