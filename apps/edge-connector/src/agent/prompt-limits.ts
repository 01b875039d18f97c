// Bounds on what an agent may put in front of the remote user: approval and input requests, and
// the native ids the edge hashes into public ids (reference §3 "Approvals", "Input requests",
// "Activity projection"). The drivers check their native requests against them and the session
// manager checks every driver's events again, so no adapter can widen them on its own.

const KiB = 1024;

/** Native ids the edge hashes into public ids [§3 activity projection]. */
export const NATIVE_ID_MAX_CHARS = 256;

/** Approval requests are declined without asking anyone beyond these [§3 approvals]. */
export const APPROVAL_PARAMS_MAX_BYTES = 32 * KiB;
export const APPROVAL_COMMAND_MAX_CHARS = 16_384;

/** Input requests are refused beyond these [§3 input requests]. */
export const INPUT_PARAMS_MAX_BYTES = 24 * KiB;
export const INPUT_ITEM_ID_MAX_CHARS = 256;
export const INPUT_QUESTIONS_MAX = 3;
export const INPUT_QUESTION_ID_MAX_CHARS = 128;
export const INPUT_QUESTION_TEXT_MAX_CHARS = 4096;
export const INPUT_HEADER_MAX_CHARS = 256;
export const INPUT_OPTIONS_MAX = 8;
export const INPUT_OPTION_LABEL_MAX_CHARS = 512;
export const INPUT_OPTION_DESCRIPTION_MAX_CHARS = 2048;
