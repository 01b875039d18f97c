// A typed client of the edge-agent API for suites that drive a running stack from outside: the
// snapshot they read, finding an installation, saving an access, starting a session and watching
// it. It loads no service code, so `#test-support` exports it.
import type { EdgeAgentAction, EdgeAgentResult, Installation } from '#contracts';
import type { ApiClient } from './http.js';
import { sleep } from './polling.js';

/** What POST /api/v1/edge-agents answers in `data`. */
export type Snapshot = EdgeAgentResult;

export interface StartedSession {
  edgeId: string;
  accessId: string;
  installationId: string;
  sessionId: string;
  revision: number;
}

/** The edge's installation of `kind`, from a discover that answered ok. */
export async function findInstallation(
  client: ApiClient,
  edgeId: string,
  kind = 'scripted',
): Promise<Installation> {
  const discovered = await client.agent<Snapshot>({ edge_id: edgeId, action: 'discover' });
  if (discovered.status !== 'ok') throw new Error(`discover answered ${JSON.stringify(discovered)}`);
  const installation = discovered.installations?.find((candidate) => candidate.kind === kind);
  if (!installation) throw new Error(`edge ${edgeId} has no ${kind} installation`);
  return installation;
}

export interface AccessFields {
  edgeId: string;
  installation: Installation;
  project: string;
  /** Default: 'suite'. */
  name?: string;
}

/** Saves an access to `project` on the installation and returns its id. */
export async function createAccess(client: ApiClient, fields: AccessFields): Promise<string> {
  const created = await client.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: fields.name ?? 'suite',
    kind: fields.installation.kind,
    edge_id: fields.edgeId,
    installation_id: fields.installation.id,
    project: fields.project,
  });
  if (created.status !== 200 || !created.body.data) {
    throw new Error(`access create answered HTTP ${created.status}: ${JSON.stringify(created.body)}`);
  }
  return created.body.data.id;
}

/** An access saved before. */
export interface SavedAccess extends AccessFields {
  accessId: string;
}

/** Starts a session on a saved access. */
export async function startOnAccess(client: ApiClient, access: SavedAccess): Promise<StartedSession> {
  const started = await client.agent<Snapshot>({
    edge_id: access.edgeId,
    action: 'start',
    access_id: access.accessId,
    installation_id: access.installation.id,
    project: access.project,
  });
  if (started.status !== 'ok' || !started.session_id) {
    throw new Error(`start answered ${JSON.stringify(started)}`);
  }
  return {
    edgeId: access.edgeId,
    accessId: access.accessId,
    installationId: access.installation.id,
    sessionId: started.session_id,
    revision: started.revision ?? 0,
  };
}

/** Saves an access to `project` on the installation and starts a session on it. */
export async function openSession(client: ApiClient, fields: AccessFields): Promise<StartedSession> {
  return startOnAccess(client, { ...fields, accessId: await createAccess(client, fields) });
}

/** Discovers the edge's installation of `kind` (default scripted), saves an access to `project` and starts a session. */
export async function startSession(
  client: ApiClient,
  edgeId: string,
  project: string,
  options: { kind?: string; name?: string } = {},
): Promise<StartedSession> {
  const installation = await findInstallation(client, edgeId, options.kind);
  return openSession(client, { edgeId, installation, project, name: options.name });
}

/** The fields that name a started session in a request. */
export function sessionBase(session: StartedSession): {
  edge_id: string;
  access_id: string;
  session_id: string;
} {
  return { edge_id: session.edgeId, access_id: session.accessId, session_id: session.sessionId };
}

export interface WatchOptions {
  /** Fail after this long, naming `what`; default: bounded by the test's own timeout. */
  timeoutMs?: number;
  what?: string;
  /**
   * Retry HTTP errors and `unavailable` answers, as a client does while a service restarts.
   * Default: an HTTP error fails the watch.
   */
  tolerateRestarts?: boolean;
}

/** Watches from `from` until `done` holds for a snapshot (an `unavailable` one is retried). */
export async function watchUntil(
  client: ApiClient,
  base: Record<string, unknown>,
  from: number,
  done: (snapshot: Snapshot) => boolean,
  options: WatchOptions = {},
): Promise<Snapshot> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
  let cursor = from;
  for (;;) {
    if (Date.now() > deadline) {
      throw new Error(
        `${options.what ?? 'the watched condition'} did not happen within ${options.timeoutMs} ms`,
      );
    }
    const snapshot = await watchOnce(client, base, cursor, options.tolerateRestarts ?? false);
    if (!snapshot || snapshot.status === 'unavailable') {
      await sleep(200);
      continue;
    }
    if (done(snapshot)) return snapshot;
    cursor = snapshot.revision ?? cursor;
  }
}

/** Watches until the turn has finished: idle at a revision past `from`. */
export function watchUntilIdle(
  client: ApiClient,
  base: Record<string, unknown>,
  from: number,
  options: WatchOptions = {},
): Promise<Snapshot> {
  return watchUntil(
    client,
    base,
    from,
    (snapshot) => !snapshot.running && (snapshot.revision ?? 0) > from,
    options,
  );
}

/** One watch; undefined when it failed while a service restarted and that is tolerated. */
async function watchOnce(
  client: ApiClient,
  base: Record<string, unknown>,
  cursor: number,
  tolerateRestarts: boolean,
): Promise<Snapshot | undefined> {
  const request = { ...base, action: 'watch', cursor: String(cursor) };
  if (!tolerateRestarts) return client.agent<Snapshot>(request);
  try {
    return await client.agent<Snapshot>(request);
  } catch {
    // A restarting service refuses the connection or answers 5xx for a moment; a client retries.
    return undefined;
  }
}

/** The objects a request names. */
export interface ObjectIds {
  edge: string;
  access: string;
  session: string;
  approval: string;
  input: string;
  transfer: string;
}

/** A request for `action` that passes validation, naming the given objects. */
export function validRequest(
  action: EdgeAgentAction,
  ids: ObjectIds,
  start: { installation: string; project: string },
): Record<string, unknown> {
  const edge = { edge_id: ids.edge, action };
  const scoped = { ...edge, access_id: ids.access, session_id: ids.session };
  switch (action) {
    case 'discover':
      return edge;
    case 'directories':
    case 'sessions':
      return { ...edge, access_id: ids.access };
    case 'start':
      return { ...edge, access_id: ids.access, installation_id: start.installation, project: start.project };
    case 'send':
      return { ...scoped, text: 'a prompt' };
    case 'watch':
      return { ...scoped, cursor: '999999' };
    case 'model':
      return { ...scoped, model: 'scripted-fast' };
    case 'rename':
      return { ...scoped, title: 'a title' };
    case 'approve':
      return { ...scoped, approval_id: ids.approval, decision: 'decline' };
    case 'permissions':
      return { ...scoped, permission_mode: 'read-only' };
    case 'answer':
      return { ...scoped, input_id: ids.input, answers: [{ question_id: 'choice', answers: ['yes'] }] };
    case 'transcript':
      return { ...scoped, history_before: '1' };
    case 'file_list':
      return { ...scoped, file: { path: '' } };
    case 'file_read':
      return { ...scoped, file: { path: 'notes.txt' } };
    case 'file_begin':
      return { ...scoped, file: { name: 'up.txt', size: 4 } };
    case 'file_write':
      return { ...scoped, file: { transfer_id: ids.transfer, offset: 0, data: 'dGVzdA==' } };
    case 'file_commit':
    case 'file_cancel':
      return { ...scoped, file: { transfer_id: ids.transfer } };
    default:
      return scoped;
  }
}
