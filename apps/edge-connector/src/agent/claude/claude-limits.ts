// Bounds of the Claude Code driver. The stream bounds are those of the reference edge's Claude
// adapter (reference §3, "Claude Code"); the rest say where their value comes from.

const KiB = 1024;
const MiB = 1024 * KiB;

/** One stream-json line from or to `claude` [§3 Claude Code]. */
export const STREAM_FRAME_MAX_BYTES = 2 * MiB;
/**
 * Inbound messages waiting for the consumer; overflow closes the session [§3 Claude Code]. The
 * session consumes synchronously, so only a consumer that re-enters the stream can fill it.
 */
export const STREAM_EVENT_QUEUE_MAX = 64;
/** Control requests sent to `claude` and not answered yet [§3 Claude Code]. */
export const OUTGOING_CONTROLS_MAX = 32;
/** Permission questions (`can_use_tool`) open at once; more are denied unasked [§3 Claude Code]. */
export const PENDING_APPROVALS_MAX = 32;
/**
 * `initialize` must answer within this time. Claude Code starts in about a second on an idle
 * machine; the margin covers a loaded one and stays under the edge's 20 s RPC deadline.
 */
export const HANDSHAKE_TIMEOUT_MS = 15_000;
/** Any other control request (interrupt, set_model); the same margin as the Codex driver. */
export const CONTROL_TIMEOUT_MS = 15_000;

// Permission-question, AskUserQuestion and native-id bounds are those of every driver:
// ../prompt-limits.ts.

/**
 * Tool calls remembered per turn (to finish their activities); later ones show no activity. Far
 * above the 128 activities a snapshot keeps [§3 activity projection].
 */
export const TOOLS_PER_TURN_MAX = 1024;
// The model catalog's and discovery's bounds are every driver's: ../model-catalog.ts,
// ../install-discovery.ts.

/** Bytes read from a candidate to tell a native binary or JS entry point from a wrapper script. */
export const DISCOVERY_HEAD_BYTES = 64;
