// Shared setup for the ACP edge suites: an edge with TETHER_AGENT=acp on the shared NATS, driven
// only through edge_agent_v1, with a raw responder standing in for the router's update subject.
import path from 'node:path';
import { type EdgeAgentResult } from '#contracts';
import type { RunningEdge } from '../../../apps/edge-connector/src/app.js';
import { AgentEdgeBus } from '../../support/edge.js';

export {
  childrenIn,
  killAgentsIn,
  lastAssistant,
  REMEMBER_SWORDFISH,
  tearDownCase,
} from '../../support/edge.js';

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
        TETHER_AGENT: 'acp',
        PATH: process.env.PATH,
        LANG: 'C.UTF-8',
        ...env,
      },
      WAIT_MS,
    );
  }

  /** Watches until `done` holds, bounded by WAIT_MS. */
  override watchUntil(
    sessionId: string,
    done: (s: EdgeAgentResult) => boolean,
    what: string,
    waitMs = WAIT_MS,
  ): Promise<EdgeAgentResult> {
    return super.watchUntil(sessionId, done, what, waitMs);
  }
}
