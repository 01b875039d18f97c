// The edge_agent actions, one row each: every per-action fact the services act on lives here, and
// the lists they used to restate (EDGE_AGENT_ACTIONS, FILE_ACTIONS, OPERATION_ACTIONS,
// AUDITED_ACTIONS, validation's session actions, the router's lease rule and paths, the api's
// permission and re-authorization rules) are derived from it. Adding an action is one row here
// plus its field rules (validation.ts) and, when public, its OpenAPI shape and example;
// actions.spec.ts fails until they agree (docs/architecture.md "The action table").

/** A permission the api checks besides the edge-agents route's own (reference §5). */
export type ActionPermission = 'files.read' | 'files.upload';

/**
 * How the router's operation ledger runs an action that carried the mutation envelope
 * (operations.ts): `send` writes a submission ahead of its dispatch, `prompt` resolves one
 * approval or input request by revision, `plain` is a single edge call.
 */
export type OperationKind = 'send' | 'prompt' | 'plain';

/**
 * The router's own part of an action's path (apps/session-router RouterPath): `watch` waits for a
 * revision; `live_or_stored` asks the edge and falls back to the stored snapshot when it is
 * offline; `sessions` merges stored history into the edge's list; the others are served with or
 * by history (stored-sessions). An action without one goes to the edge alone.
 */
export type RouterPathKind =
  | 'watch'
  | 'live_or_stored'
  | 'sessions'
  | 'resume'
  | 'send'
  | 'rename'
  | 'delete'
  | 'discard'
  | 'transcript';

export interface ActionSpec {
  /** `public`: a client may send it over HTTP; `internal`: only Tether itself, to an edge. */
  readonly visibility: 'public' | 'internal';
  /** It names one session in `session_id` (validation requires a 32-character id). */
  readonly session: boolean;
  /** The permission the api requires for it besides the route's; null: the route's alone. */
  readonly permission: ActionPermission | null;
  /** It accepts the mutation envelope, and how the router runs it then; null: refused. */
  readonly operation: OperationKind | null;
  /** It renews its session's idle lease in the router (reference §4: background reads do not). */
  readonly renewsLease: boolean;
  /** It changes something and is audited (reference §2.1 "Management audit", plus uploads). */
  readonly audited: boolean;
  /** A file action: it takes `file` (and only file actions do). */
  readonly file: boolean;
  /**
   * The api authorizes the caller again before the reply leaves: a watch waits and a file call
   * moves data, so either may outlast the token or the grant.
   */
  readonly reauthorize: boolean;
  /** The router's own path for it; null: straight to the edge. */
  readonly router: RouterPathKind | null;
}

// Rows state only what differs from an action that reads without a session: no permission, no
// envelope, renews the lease, not audited, not a file action, no router path of its own.
const DEFAULTS = {
  session: false,
  permission: null,
  operation: null,
  renewsLease: true,
  audited: false,
  file: false,
  reauthorize: false,
  router: null,
} as const;

function row<
  const V extends ActionSpec['visibility'],
  const F extends Partial<Omit<ActionSpec, 'visibility'>>,
>(visibility: V, facts: F): Omit<typeof DEFAULTS, keyof F> & F & { visibility: V } {
  return { ...DEFAULTS, ...facts, visibility };
}

/** A file action: one session, its own permission, re-authorized before its data leaves. */
function fileRow<const P extends ActionPermission, const A extends boolean>(permission: P, audited: A) {
  return row('public', { session: true, permission, audited, file: true, reauthorize: true });
}

/** Order matters: the public rows' order is the OpenAPI document's and the decoders' order. */
export const ACTIONS = {
  discover: row('public', { renewsLease: false }),
  directories: row('public', { renewsLease: false }),
  sessions: row('public', { renewsLease: false, router: 'sessions' }),
  start: row('public', { audited: true }),
  resume: row('public', { session: true, audited: true, router: 'resume' }),
  poll: row('public', { session: true, router: 'live_or_stored' }),
  watch: row('public', { session: true, reauthorize: true, router: 'watch' }),
  send: row('public', { session: true, operation: 'send', audited: true, router: 'send' }),
  interrupt: row('public', { session: true, operation: 'plain', audited: true }),
  stop: row('public', { session: true, audited: true, router: 'live_or_stored' }),
  models: row('public', { session: true }),
  model: row('public', { session: true, operation: 'plain', audited: true }),
  rename: row('public', { session: true, audited: true, router: 'rename' }),
  delete: row('public', { session: true, audited: true, router: 'delete' }),
  discard: row('public', { session: true, audited: true, router: 'discard' }),
  approve: row('public', { session: true, operation: 'prompt', audited: true }),
  permissions: row('public', { session: true, operation: 'plain', audited: true }),
  answer: row('public', { session: true, operation: 'prompt', audited: true }),
  transcript: row('public', { session: true, router: 'transcript' }),
  file_list: fileRow('files.read', false),
  file_begin: fileRow('files.upload', true),
  file_write: fileRow('files.upload', true),
  file_commit: fileRow('files.upload', true),
  file_cancel: fileRow('files.upload', true),
  file_read: fileRow('files.read', false),
  /** Reads without renewing the lease (reference §2.3). */
  snapshot: row('internal', { session: true, renewsLease: false }),
  /** The router's lease reaper closing a session. */
  expire: row('internal', { session: true, renewsLease: false }),
  /**
   * The router's reconciler asking what became of a send (`dispatch_id`). It asks the edge
   * directly, never through the lease path; `renewsLease` stays what the router answered before.
   */
  dispatch_status: row('internal', { session: true }),
} as const satisfies Record<string, ActionSpec>;

type Table = typeof ACTIONS;
export type ActionName = keyof Table;

/** Every action, in table order. */
export const ACTION_NAMES = Object.keys(ACTIONS) as ActionName[];

/** Actions a client may send over HTTP (the proto's list plus the contract's later additions). */
export type EdgeAgentAction = {
  [A in ActionName]: Table[A]['visibility'] extends 'public' ? A : never;
}[ActionName];
export const EDGE_AGENT_ACTIONS: readonly EdgeAgentAction[] = ACTION_NAMES.filter(
  (action): action is EdgeAgentAction => ACTIONS[action].visibility === 'public',
);

/** Actions only Tether itself sends to an edge, never accepted over HTTP. */
export type EdgeAgentInternalAction = Exclude<ActionName, EdgeAgentAction>;
export const EDGE_AGENT_INTERNAL_ACTIONS: readonly EdgeAgentInternalAction[] = ACTION_NAMES.filter(
  (action): action is EdgeAgentInternalAction => ACTIONS[action].visibility === 'internal',
);
export type EdgeAgentAnyAction = ActionName;

export type FileAction = { [A in ActionName]: Table[A]['file'] extends true ? A : never }[ActionName];
export const FILE_ACTIONS: readonly FileAction[] = ACTION_NAMES.filter(
  (action): action is FileAction => ACTIONS[action].file,
);

/** The actions that accept the mutation envelope. */
export type OperationAction = {
  [A in ActionName]: Table[A]['operation'] extends OperationKind ? A : never;
}[ActionName];
export const OPERATION_ACTIONS: readonly OperationAction[] = ACTION_NAMES.filter(
  (action): action is OperationAction => ACTIONS[action].operation !== null,
);

export type AuditedAction = { [A in ActionName]: Table[A]['audited'] extends true ? A : never }[ActionName];
export const AUDITED_ACTIONS: readonly AuditedAction[] = ACTION_NAMES.filter(
  (action): action is AuditedAction => ACTIONS[action].audited,
);

/** The row of `action`, or undefined when it names no action (any string a client sent). */
export function actionSpec(action: string): ActionSpec | undefined {
  return Object.hasOwn(ACTIONS, action) ? ACTIONS[action as ActionName] : undefined;
}

export function isOperationAction(action: string): action is OperationAction {
  return actionSpec(action)?.operation != null;
}
