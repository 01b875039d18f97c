// Shared setup for the ACP edge suites: an edge with TETHER_AGENT=acp on the shared NATS, driven
// only through edge_agent_v1, with a raw responder standing in for the router's update subject.
import path from 'node:path';
import { type EdgeAgentResult } from '#contracts';
import type { RunningEdge } from '../../../apps/edge-connector/src/edge.app.js';
import { AgentEdgeBus } from '../edge/edge-bus.js';

export { childrenIn, killAgentsIn } from '../edge/edge-bus.js';

export const WAIT_MS = 30_000;
export const ACTOR = '7';
export const ACCESS = 'a'.repeat(32);
export const repoRoot = path.resolve(import.meta.dirname, '../../..');

export class EdgeBus extends AgentEdgeBus {
  constructor(edgeId: string, prefix: string) {
    super(edgeId, prefix, ACCESS, ACTOR);
  }

  /** Boots an ACP edge and waits until it answers. */
  boot(env: Record<string, string | undefined>): Promise<RunningEdge> {
    return this.start(
      {
        TETHER_EDGE_TOKEN: 'acp-edge-token-for-tests',
        TETHER_AGENT: 'acp',
        PATH: process.env.PATH,
        LANG: 'C.UTF-8',
        ...env,
      },
      WAIT_MS,
    );
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
