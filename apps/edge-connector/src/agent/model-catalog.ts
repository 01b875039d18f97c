// An agent's model list as every driver keeps it [§3 catalogs]: an id that is too long, holds
// control characters or was already listed is skipped; a display name that is unfit falls back to
// the id; a list longer than the bound is refused rather than cut, so no driver shows part of one.
import type { AgentModel } from '#contracts';
import { DriverError } from './agent-driver.js';

// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export interface ModelCatalogBounds {
  /** Longest id (UTF-8 bytes), and longest display name (characters). */
  idMaxBytes: number;
  /** Most models a list may hold. */
  max: number;
}

export class ModelCatalog {
  readonly models: AgentModel[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly bounds: ModelCatalogBounds) {}

  /** Lists `id`, named `display` when fit; false when the id is unusable or already listed. */
  add(id: string | undefined, display: string | undefined): boolean {
    const { idMaxBytes, max } = this.bounds;
    if (!id || Buffer.byteLength(id) > idMaxBytes || CONTROL_CHARS.test(id) || this.seen.has(id))
      return false;
    this.seen.add(id);
    const name = display && display.length <= idMaxBytes && !CONTROL_CHARS.test(display) ? display : id;
    this.models.push({ id, name });
    if (this.models.length > max) throw new DriverError('unavailable', 'The agent lists too many models');
    return true;
  }
}
