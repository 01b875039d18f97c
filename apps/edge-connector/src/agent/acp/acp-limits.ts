// Bounds of the ACP driver. They are the Codex driver's transport bounds (the reference edge's
// JSON-RPC limits) so every agent behind the edge is held to the same envelope.
export { RPC_EVENT_QUEUE_MAX, RPC_FRAME_MAX_BYTES, RPC_PENDING_CALLS_MAX } from '../codex/codex-limits.js';

/**
 * `initialize` of a process a start waits for must answer within this, so the start can still
 * answer inside the edge's 20 s RPC deadline (EDGE_RPC_TIMEOUT_MS). Gemini CLI needs ~1.7 s on an
 * idle 2-core machine.
 */
export const HANDSHAKE_TIMEOUT_MS = 15_000;
/**
 * A spare's `initialize`: nobody waits on it, and a loaded machine boots Gemini CLI in 10 s or more
 * (13 s seen at load 28 on 2 cores).
 */
export const SPARE_HANDSHAKE_TIMEOUT_MS = 60_000;
/** How long a start waits for a spare that is still booting before it answers `unavailable`. */
export const SPARE_WAIT_MS = 15_000;
/** `session/new`, `session/load`, `session/set_model`: shorter than the edge's 20 s RPC deadline. */
export const CALL_TIMEOUT_MS = 15_000;
/** Permission requests waiting for an answer at once; more are answered `cancelled`. */
export const PENDING_PERMISSIONS_MAX = 32;
/** A permission request larger than this is answered `cancelled` without asking anyone. */
export const PERMISSION_PARAMS_MAX_BYTES = 32 * 1024;
/** Text of one tool title or command shown on a card. */
export const TOOL_TITLE_MAX_CHARS = 16_384;
/** Diff text kept per file change shown for approval. */
export const DIFF_MAX_CHARS = 64 * 1024;
/** Installations with a spare process at once (each spare is a full agent process). */
export const SPARES_MAX = 4;
/** Agents declared in the edge's own configuration. */
export const DECLARED_AGENTS_MAX = 8;
/**
 * After `session/load`, the first prompt waits until the replayed conversation has gone quiet for
 * this long (load-replay.ts): Gemini CLI streams it after answering the load.
 */
export const LOAD_REPLAY_QUIET_MS = 250;
/** ... but never longer than this in all: a replay still running after it is a huge history. */
export const LOAD_REPLAY_MAX_MS = 5_000;
