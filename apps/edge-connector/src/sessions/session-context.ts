// What the action handlers of the session manager share. Each group of actions lives in its own
// file and registers its handlers by action name; SessionsService looks them up.
import type { Logger } from '@nestjs/common';
import type {
  EdgeAgentAction,
  EdgeAgentInternalAction,
  EdgeAgentResult,
  EdgeAgentRPCRequest,
} from '#contracts';
import { DriverError } from '../agent/agent-driver.js';
import { EdgeStatusError } from '../common/edge-errors.js';
import type { FilesService } from '../files/files.service.js';
import { BindingStoreError, type BindingStore } from './bindings.js';
import type { DispatchRecords } from './dispatch-records.js';
import type { LiveSession } from './live-session.js';
import type { SessionLauncher } from './session-launcher.js';
import type { SessionRegistry } from './session-registry.js';

export type ActionHandler = (rpc: EdgeAgentRPCRequest, signal: AbortSignal) => Promise<EdgeAgentResult>;
export type ActionHandlers = Partial<Record<EdgeAgentAction | EdgeAgentInternalAction, ActionHandler>>;

export interface SessionsContext {
  readonly log: Logger;
  readonly registry: SessionRegistry;
  readonly launcher: SessionLauncher;
  readonly bindings: BindingStore;
  readonly dispatches: DispatchRecords;
  /** directories, file_* and attachments; without it they answer `upgrade_required`. */
  readonly files: FilesService | undefined;
  /** Whether the router journaled this revision of the session (see SessionChangeSink.journaled). */
  readonly journaled: (sessionId: string, revision: number, timeoutMs: number) => Promise<boolean>;
}

export function requireFiles(context: SessionsContext): FilesService {
  if (!context.files) throw new EdgeStatusError('upgrade_required', 'Files are not served by this edge.');
  return context.files;
}

/** The status a failed action answers with; anything unexpected is `unavailable`. */
export function toPublicStatus(error: unknown): EdgeStatusError {
  if (error instanceof EdgeStatusError) return error;
  if (error instanceof DriverError) return new EdgeStatusError(error.status, error.message);
  if (error instanceof BindingStoreError) return new EdgeStatusError('unavailable', error.message);
  return new EdgeStatusError('unavailable', 'The agent failed.');
}

/** A turn whose native call failed: the session closes with `turn_failed`. */
export async function closeFailedTurn(session: LiveSession): Promise<void> {
  try {
    await session.close('turn_failed');
  } catch {
    // The session is already marked turn_failed; the native close is best effort.
  }
}
