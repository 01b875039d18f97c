// Shared setup for the ACP edge suites: an edge with TETHER_AGENT=acp on the shared NATS, driven
// only through edge_agent_v1, with a raw responder standing in for the router's update subject.
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import {
  Limits,
  Subjects,
  type EdgeAgentRequest,
  type EdgeAgentResult,
  type EdgeAgentRPCRequest,
  type SessionUpdate,
} from '#contracts';
import { connectNats, decodeJson, encodeJson, requestJson } from '#messaging';
import { testServices, uniqueNamespace } from '#test-support';
import { loadEdgeConfig } from '../../../apps/edge-connector/src/config.js';
import { startEdge, type RunningEdge } from '../../../apps/edge-connector/src/edge.app.js';

export const WAIT_MS = 30_000;
export const ACTOR = '7';
export const ACCESS = 'a'.repeat(32);
export const repoRoot = path.resolve(import.meta.dirname, '../../..');

export class EdgeBus {
  nc!: NatsConnection;
  subjects!: Subjects;
  natsUrl!: string;
  readonly updates: SessionUpdate[] = [];
  private responder?: Subscription;

  constructor(
    private readonly edgeId: string,
    private readonly prefix: string,
  ) {}

  async open(): Promise<void> {
    this.natsUrl = (await testServices()).natsUrl;
    this.subjects = new Subjects(uniqueNamespace(this.prefix));
    this.nc = await connectNats({ servers: this.natsUrl, name: `${this.prefix}-test` });
    this.responder = this.nc.subscribe(this.subjects.sessionUpdateWildcard, {
      callback: (_error, msg) => {
        this.updates.push(decodeJson<SessionUpdate>(msg.data));
        msg.respond(encodeJson({ ok: true, epoch: 'e1', sequence: this.updates.length, duplicate: false }));
      },
    });
    await this.nc.flush();
  }

  async close(): Promise<void> {
    this.responder?.unsubscribe();
    await this.nc?.drain();
  }

  rpc(
    request: Partial<EdgeAgentRequest> & { action: EdgeAgentRequest['action'] },
    envelope: Partial<EdgeAgentRPCRequest> = {},
    timeoutMs: number = Limits.ROUTER_EDGE_RPC_TIMEOUT_MS,
  ): Promise<EdgeAgentResult> {
    return requestJson<EdgeAgentResult>(
      this.nc,
      this.subjects.edgeRpc(this.edgeId),
      { version: 1, actor_id: ACTOR, ...envelope, request: { edge_id: this.edgeId, ...request } },
      { timeoutMs },
    );
  }

  /** Boots an ACP edge and waits until it answers. */
  async boot(env: Record<string, string | undefined>): Promise<RunningEdge> {
    const edge = await startEdge(
      loadEdgeConfig({
        TETHER_NATS_URL: this.natsUrl,
        TETHER_NAMESPACE: this.subjects.namespace,
        TETHER_LOG_LEVEL: 'error',
        TETHER_EDGE_ID: this.edgeId,
        TETHER_EDGE_TOKEN: 'acp-edge-token-for-tests',
        TETHER_AGENT: 'acp',
        // CI runs as root; the root refusal is the same code path as the Codex driver's.
        TETHER_EDGE_ALLOW_ROOT: 'true',
        PATH: process.env.PATH,
        LANG: 'C.UTF-8',
        ...env,
      }),
    );
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      try {
        await this.rpc({ action: 'sessions', access_id: ACCESS }, {}, 1_000);
        return edge;
      } catch (error) {
        if (Date.now() > deadline) {
          await edge.close();
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  on(sessionId: string) {
    return { session_id: sessionId, access_id: ACCESS };
  }

  async watchUntil(
    sessionId: string,
    done: (s: EdgeAgentResult) => boolean,
    what: string,
  ): Promise<EdgeAgentResult> {
    const deadline = Date.now() + WAIT_MS;
    let snapshot = await this.rpc({ action: 'poll', ...this.on(sessionId) });
    while (!done(snapshot)) {
      if (Date.now() > deadline)
        throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(snapshot)}`);
      snapshot = await this.rpc({
        action: 'watch',
        ...this.on(sessionId),
        cursor: String(snapshot.revision),
      });
    }
    return snapshot;
  }

  async send(sessionId: string, text: string): Promise<EdgeAgentResult> {
    return this.rpc({ action: 'send', ...this.on(sessionId), text });
  }
}

export const lastAssistant = (snapshot: EdgeAgentResult): string =>
  snapshot.messages?.filter((message) => message.role === 'assistant').at(-1)?.text ?? '';

/** Children of this process whose working directory is under `dir` (agent processes it launched). */
export function childrenIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cwd = realpathSync(`/proc/${entry}/cwd`);
      if (cwd === dir || cwd.startsWith(`${dir}/`)) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Kills the process group of every agent a test left under `dir`. */
export function killAgentsIn(dir: string): void {
  for (const pid of childrenIn(dir)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
