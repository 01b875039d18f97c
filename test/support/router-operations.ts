// What the router's idempotent-mutation suites share: a scripted edge that can answer late, stay
// silent or send garbage, a session the router journals, enveloped requests, and the journal's
// submission rows of a session.
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  journalMessageSchema,
  operationFingerprint,
  result,
  type EdgeAgentRPCRequest,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type JournalWireMessage,
  type OperationAction,
} from '#contracts';
import { decodeJson, encodeJson, requestService } from '#messaging';
import { sessionId, sessionUpdate, type Suite } from './router.js';

export const OPERATIONS_ACTOR = 'user-1';

/** What the fake edge does with one request: answer (now or later), stay silent (a timeout), or send garbage. */
export type EdgeAnswer = EdgeAgentResult | 'silent' | 'garbage' | Promise<EdgeAgentResult>;

/** An edge's plain success: a send's reply carries the user message it made. */
export function okFor(rpc: EdgeAgentRPCRequest): EdgeAgentResult {
  const sid = rpc.request.session_id;
  if (rpc.request.action === 'send') {
    return result('ok', {
      session_id: sid,
      revision: 5,
      running: true,
      messages: [{ role: 'user', text: rpc.request.text }],
    });
  }
  return result('ok', { session_id: sid, revision: 5 });
}

/** The request with a correct envelope (fingerprint computed like a client does). */
export function enveloped(
  action: OperationAction,
  request: Omit<EdgeAgentRequest, 'action'>,
  id = newOperationId(),
  extra: Partial<EdgeAgentRequest> = {},
): EdgeAgentRequest {
  const base = { ...request, action, ...extra } as EdgeAgentRequest;
  return { ...base, client_operation_id: id, payload_fingerprint: operationFingerprint(action, base) };
}

export function newOperationId(at = Date.now()): string {
  return `${at}-${randomBytes(16).toString('hex')}`;
}

/** The helpers bound to a suite created later (in `beforeAll`); edge ids count up from `firstEdge`. */
export function operationsHelpers(suite: () => Suite, firstEdge: number) {
  let nextEdge = firstEdge;

  /** A fresh edge id and its responder; every request is recorded. */
  async function edge(answer: (rpc: EdgeAgentRPCRequest) => EdgeAnswer = okFor) {
    const edgeId = String((nextEdge += 1));
    const requests: EdgeAgentRPCRequest[] = [];
    const subscription = suite().nc.subscribe(suite().subjects.edgeRpc(edgeId), {
      callback: (_error, msg) => {
        // The router's liveness probe (an empty request) while a call waits: answered at once.
        if (msg.data.length === 0) {
          msg.respond(encodeJson(result('invalid_request')));
          return;
        }
        const rpc = decodeJson<EdgeAgentRPCRequest>(msg.data);
        requests.push(rpc);
        const reply = answer(rpc);
        if (reply === 'silent') return;
        if (reply === 'garbage') msg.respond(new TextEncoder().encode('{not json'));
        else void Promise.resolve(reply).then((late) => msg.respond(encodeJson(late)));
      },
    });
    await suite().nc.flush();
    return {
      edgeId,
      requests,
      count: (action: string) => requests.filter((rpc) => rpc.request.action === action).length,
      stop: () => subscription.unsubscribe(),
    };
  }

  /** A session the router journals (one edge update), owned by OPERATIONS_ACTOR on `edgeId`. */
  async function knownSession(edgeId: string): Promise<string> {
    const sid = sessionId();
    await requestService(
      suite().nc,
      suite().subjects,
      'routerSessionUpdate',
      sessionUpdate({ session_id: sid, revision: 1, edge_id: edgeId }),
      { timeoutMs: 10_000 },
    );
    return sid;
  }

  const route = (request: EdgeAgentRequest, actor = OPERATIONS_ACTOR) =>
    requestService(
      suite().nc,
      suite().subjects,
      'routerEdgeAgent',
      { actor_id: actor, request },
      { timeoutMs: 20_000 },
    );

  /** The data of every message the sessions stream holds on `subject`, in stream order. */
  async function storedOn(subject: string): Promise<Uint8Array[]> {
    const { nc, subjects } = suite();
    const jsm = await jetstreamManager(nc);
    const stored: Uint8Array[] = [];
    const info = await jsm.streams.info(subjects.sessionsStream);
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const message = await jsm.streams.getMessage(subjects.sessionsStream, { seq }).catch(() => null);
      if (message?.subject === subject) stored.push(message.data);
    }
    return stored;
  }

  /** Every journal row of the session, in stream order. */
  const journal = async (sid: string): Promise<JournalWireMessage[]> =>
    (await storedOn(suite().subjects.sessionJournal(sid))).map((data) =>
      journalMessageSchema.parse(decodeJson(data)),
    );

  /** The dispatch state of each submission row of the session, in journal order. */
  const submissionStates = async (sid: string) =>
    (await journal(sid)).flatMap((row) => ('kind' in row ? [row.submission.dispatch_state] : []));

  return { edge, knownSession, route, storedOn, journal, submissionStates };
}
