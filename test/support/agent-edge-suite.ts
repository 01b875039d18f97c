// The set-up the edge suites of the CLI agents (Claude Code, Codex) share: one bus per suite and,
// per test, a fresh provider and scratch folders with an edge booted on them (all torn down
// after), the client steps the shared scenarios drive, and those scenarios bound to the test's
// edge (these and prompt-scenarios.ts's). What differs per agent (its provider, its environment,
// how a new session reads) is passed in.
import { afterAll, afterEach, beforeAll, beforeEach, expect } from '@jest/globals';
import type { EdgeAgentResult } from '#contracts';
import type { RunningEdge } from '../../apps/edge-connector/src/app.js';
import {
  AgentEdgeBus,
  caseDirs,
  clientSteps,
  expectOneOfTwoKilled,
  expectResumedAfterRestart,
  tearDownCase,
} from './edge.js';
import { promptScenarios } from '../integration/edge/prompt-scenarios.js';

export type CaseDirs = Awaited<ReturnType<typeof caseDirs>>;

/** What a test's case holds before its edge boots: its folders, its provider and the agent's own. */
export type PreparedCase = CaseDirs & { provider: { stop(): Promise<void> } };

export interface AgentEdgeOptions<Prepared extends PreparedCase> {
  agent: 'claude' | 'codex';
  edgeId: string;
  /** The bound of every wait on the edge. */
  waitMs: number;
  /** Starts the test's provider and writes what the agent reads before its edge boots. */
  prepare(dirs: CaseDirs): Promise<Prepared>;
  /** The edge's environment beyond the agent and its data directory. */
  env(c: Prepared): Record<string, string | undefined>;
  /** The agent's own checks of a session just started (status, revision 1 and project are shared). */
  expectStarted(started: EdgeAgentResult): void;
}

/**
 * Registers the suite's hooks (bus per suite, case and edge per test) and returns what its tests
 * drive: the bus, the client steps, `start` and the test's case (read it inside a test or hook).
 */
export function agentEdgeSuite<Prepared extends PreparedCase>(options: AgentEdgeOptions<Prepared>) {
  const bus = new AgentEdgeBus(options.edgeId, `${options.agent}edge`);
  let current: Prepared & { edge: RunningEdge };
  const bootEdge = (c: Prepared): Promise<RunningEdge> =>
    bus.start(
      { TETHER_AGENT: options.agent, TETHER_EDGE_DATA_DIR: c.dataDir, ...options.env(c) },
      options.waitMs,
    );

  beforeAll(() => bus.open());
  afterAll(() => bus.close());
  beforeEach(async () => {
    const c = await options.prepare(await caseDirs(`${options.agent}-edge`));
    current = { ...c, edge: await bootEdge(c) };
  });
  afterEach(() => tearDownCase(current));

  async function start(project = current.project): Promise<EdgeAgentResult> {
    const started = await bus.startSession(options.agent, project);
    expect(started).toMatchObject({ status: 'ok', revision: 1, project });
    options.expectStarted(started);
    return started;
  }

  /** Watches, as a client would (bounded by waitMs), until a condition holds or the turn is over. */
  const client = clientSteps(bus, options.waitMs);
  const steps = { start, send: client.send, watch: client.watch, untilIdle: client.untilIdle };
  return {
    bus,
    ...client,
    start,
    steps,
    get current() {
      return current;
    },
    ...promptScenarios(bus, steps),
    /** expectOneOfTwoKilled in this test's folders. */
    expectOneOfTwoKilled: () =>
      expectOneOfTwoKilled({ ...steps, base: current.base, project: current.project }),
    /** expectResumedAfterRestart, restarting this test's edge on the same case. */
    expectResumedAfterRestart: (expected?: Partial<EdgeAgentResult>) =>
      expectResumedAfterRestart(
        bus,
        {
          ...steps,
          project: current.project,
          stopEdge: () => current.edge.close(),
          bootEdge: async () => {
            current.edge = await bootEdge(current);
          },
        },
        expected,
      ),
  };
}
