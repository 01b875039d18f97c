// A typed client of the edge-agent API for suites that drive a running stack from outside: the
// snapshot shape they read, starting a session on a saved access, watching a turn to its end,
// and waiting for a condition. Kept out of `#test-support`'s index like e2e-stack.ts.
import type { EdgeAgentAction } from '#contracts';
import type { ApiClient } from './http.js';

/** The parts of an EdgeAgentResult that suites read. */
export interface Snapshot {
  status: string;
  session_id?: string;
  revision?: number;
  running?: boolean;
  closed?: boolean;
  archived?: boolean;
  messages?: { role: string; text?: string }[];
  installations?: { id: string; kind: string }[];
  sessions?: { session_id: string }[];
  approvals?: { id: string; kind?: string }[];
  input_requests?: { id: string }[];
  history_total?: number;
}

export interface StartedSession {
  edgeId: string;
  accessId: string;
  installationId: string;
  sessionId: string;
  revision: number;
}

/** Polls `probe` until it returns a value, at most `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`${what} did not happen within ${timeoutMs} ms`);
}

/** Discovers the edge's scripted installation, saves an access to `project` and starts a session. */
export async function startScriptedSession(
  client: ApiClient,
  edgeId: string,
  project: string,
): Promise<StartedSession> {
  const discovered = await client.agent<Snapshot>({ edge_id: edgeId, action: 'discover' });
  const installation = discovered.installations?.find((candidate) => candidate.kind === 'scripted');
  if (!installation) throw new Error(`edge ${edgeId} has no scripted installation`);
  const created = await client.call<{ id: string }>('POST', '/api/v1/agent-accesses', {
    name: 'suite',
    kind: 'scripted',
    edge_id: edgeId,
    installation_id: installation.id,
    project,
  });
  if (created.status !== 200 || !created.body.data) {
    throw new Error(`access create answered HTTP ${created.status}: ${JSON.stringify(created.body)}`);
  }
  const accessId = created.body.data.id;
  const started = await client.agent<Snapshot>({
    edge_id: edgeId,
    action: 'start',
    access_id: accessId,
    installation_id: installation.id,
    project,
  });
  if (started.status !== 'ok' || !started.session_id) {
    throw new Error(`start answered ${JSON.stringify(started)}`);
  }
  return {
    edgeId,
    accessId,
    installationId: installation.id,
    sessionId: started.session_id,
    revision: started.revision ?? 0,
  };
}

/** Watches from `from` until `done` holds for a snapshot; a restarting service is retried. */
export async function watchUntil(
  client: ApiClient,
  base: Record<string, unknown>,
  from: number,
  done: (snapshot: Snapshot) => boolean,
): Promise<Snapshot> {
  let cursor = from;
  for (;;) {
    const reply = await client.call<Snapshot>('POST', '/api/v1/edge-agents', {
      ...base,
      action: 'watch',
      cursor: String(cursor),
    });
    const snapshot = reply.body.data;
    if (reply.status !== 200 || !snapshot || snapshot.status === 'unavailable') {
      await new Promise((resume) => setTimeout(resume, 200));
      continue;
    }
    if (done(snapshot)) return snapshot;
    cursor = snapshot.revision ?? cursor;
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
