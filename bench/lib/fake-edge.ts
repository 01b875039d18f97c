// A raw NATS client posing as enrolled edges (valid edge tokens, `edgeToken(secret, id)`): it
// sends session updates straight to the router's session-update path and answers edge_agent_v1
// calls with each session's latest snapshot. It creates thousands of sessions cheaply, where the
// real edge connector keeps at most EDGE_LIVE_SESSIONS_MAX live sessions per process.
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  EDGE_AGENT_RPC_VERSION,
  edgeToken,
  type EdgeAgentResult,
  type SessionUpdateAck,
  type Subjects,
} from '#contracts';
import { decodeJson, encodeJson, requestService } from '#messaging';

/** The router acks once JetStream stored the entry; give a loaded machine room. */
const UPDATE_TIMEOUT_MS = 15_000;

export interface FakeSession {
  id: string;
  actorId: string;
  accessId?: string;
  revision: number;
  snapshot: EdgeAgentResult;
}

/** A 32-hex id, like the edge's own session ids. */
export function opaqueId(prefix: number, index: number): string {
  return (prefix.toString(16).padStart(8, '0') + index.toString(16).padStart(24, '0')).slice(0, 32);
}

export class FakeEdge {
  readonly sessions = new Map<string, FakeSession>();
  private readonly rpc: Subscription;
  private readonly token: string;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
    readonly edgeId: string,
    secret: string,
  ) {
    this.token = edgeToken(secret, edgeId);
    this.rpc = nc.subscribe(subjects.edgeRpc(edgeId), {
      // A throwing callback would close the subscription (nats.js ends the reader), so nothing throws.
      callback: (_error, msg) => {
        // The router's liveness probe (an empty request, sent once a waiting call outlives the
        // edge's presence: this fake sends no heartbeats) only needs an answer.
        if (msg.data.length === 0) return void msg.respond();
        let call: { request?: { session_id?: string; action?: string } };
        try {
          call = decodeJson(msg.data, msg.subject);
        } catch {
          return void msg.respond(encodeJson({ version: EDGE_AGENT_RPC_VERSION, status: 'invalid_request' }));
        }
        const session = this.sessions.get(call.request?.session_id ?? '');
        const reply: EdgeAgentResult = session
          ? session.snapshot
          : {
              version: EDGE_AGENT_RPC_VERSION,
              status: call.request?.action === 'expire' ? 'ok' : 'not_found',
            };
        msg.respond(encodeJson(reply));
      },
    });
  }

  static async connect(
    natsUrl: string,
    subjects: Subjects,
    edgeId: string,
    secret: string,
  ): Promise<FakeEdge> {
    const nc = await connect({
      servers: natsUrl.split(','),
      name: `bench-edge-${edgeId}`,
      noAsyncTraces: true,
    });
    return new FakeEdge(nc, subjects, edgeId, secret);
  }

  /** Moves a session to its next revision (creating it at 1) and sends the update; resolves on the ack. */
  async update(
    id: string,
    actorId: string,
    options: { accessId?: string; text?: string; running?: boolean } = {},
  ): Promise<SessionUpdateAck> {
    const previous = this.sessions.get(id);
    const revision = (previous?.revision ?? 0) + 1;
    const now = Date.now();
    const snapshot: EdgeAgentResult = {
      version: EDGE_AGENT_RPC_VERSION,
      status: 'ok',
      session_id: id,
      revision,
      running: options.running ?? false,
      title: 'Benchmark session',
      started_at: new Date(now).toISOString(),
      messages: [
        { role: 'user', text: 'Why does the pager test fail?' },
        // The emit time rides in the text so a watcher can time edge emit → watch return (B2).
        { role: 'assistant', text: `${options.text ?? 'An off-by-one in the page size check.'} @${now}` },
      ],
    };
    const session: FakeSession = { id, actorId, accessId: options.accessId, revision, snapshot };
    this.sessions.set(id, session);
    const ack = await requestService(
      this.nc,
      this.subjects,
      'routerSessionUpdate',
      {
        edge_id: this.edgeId,
        edge_token: this.token,
        actor_id: actorId,
        ...(options.accessId ? { access_id: options.accessId } : {}),
        session_id: id,
        revision,
        snapshot,
        emitted_at: now,
      },
      { timeoutMs: UPDATE_TIMEOUT_MS },
    );
    return ack;
  }

  get connection(): NatsConnection {
    return this.nc;
  }

  async close(): Promise<void> {
    this.rpc.unsubscribe();
    await this.nc.drain();
  }
}

/** Runs `task(i)` for i in [0, count) with at most `parallel` in flight. */
export async function inParallel(
  count: number,
  parallel: number,
  task: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}
