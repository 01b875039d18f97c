import { result, type EdgeAgentRequest, type EdgeAgentResult } from '#contracts';
import { requestService } from '#messaging';
import { EdgeAgentService } from '../../../apps/session-router/src/edge-agent/edge-agent.service.js';
import type { RunningRouter } from '../../../apps/session-router/src/app.js';
import { JournalSequencerService } from '../../../apps/session-router/src/journal-sequencer/journal-sequencer.service.js';
import { JournaledSnapshots } from '../../../apps/session-router/src/journal-sequencer/journaled-snapshots.js';
import { WatchService } from '../../../apps/session-router/src/watch/watch.service.js';
import {
  createSuite,
  ROUTER_POLL,
  fakeEdge,
  sessionId,
  sessionUpdate,
  type Suite,
} from '../../support/router.js';
import { pollUntil } from '#test-support';

const EDGE = '401';

describe('router watch', () => {
  let suite: Suite;
  let edge: ReturnType<typeof fakeEdge>;

  beforeAll(async () => {
    suite = await createSuite('watch');
    edge = fakeEdge(suite, EDGE, (rpc) => result('ok', { session_id: rpc.request.session_id }));
    await edge.ready();
  });
  afterAll(async () => {
    edge.stop();
    await suite.cleanup();
  });

  const watchRequest = (sid: string, cursor: number): EdgeAgentRequest => ({
    edge_id: EDGE,
    action: 'watch',
    session_id: sid,
    cursor: String(cursor),
  });
  const routeOn = (router: RunningRouter, request: EdgeAgentRequest) =>
    router.app.get(EdgeAgentService).route({ actor_id: 'user-1', request });
  const updateOn = (router: RunningRouter, sid: string, revision: number) =>
    router.app
      .get(JournalSequencerService)
      .record(sessionUpdate({ session_id: sid, revision, edge_id: EDGE }));
  const actionsFor = (sid: string) =>
    edge.requests.filter((rpc) => rpc.request.session_id === sid).map((rpc) => rpc.request.action);

  describe('with the default 15 s wait on two replicas', () => {
    let a: RunningRouter;
    let b: RunningRouter;
    beforeAll(async () => {
      a = await suite.startRouter();
      b = await suite.startRouter();
    });

    it('returns as soon as an update stored by another replica moves the revision', async () => {
      const sid = sessionId();
      await updateOn(b, sid, 1);
      const watching = routeOn(a, watchRequest(sid, 1));
      // The waiter is registered before the update, so the wake-up cannot be missed.
      await pollUntil(
        () => a.app.get(WatchService).waiting,
        (count) => count === 1,
        ROUTER_POLL,
      );
      expect(actionsFor(sid)).toEqual([]);
      await updateOn(b, sid, 2);
      // Bounded well under the 15 s wait: only a wake-up can finish it in time.
      const guard = new Promise<'timed out'>((resolve) =>
        setTimeout(() => resolve('timed out'), 8_000).unref(),
      );
      const outcome: EdgeAgentResult | 'timed out' = await Promise.race([watching, guard]);
      expect(outcome).toEqual(result('ok', { session_id: sid }));
      expect(actionsFor(sid)).toEqual(['poll']);
      expect(a.app.get(WatchService).waiting).toBe(0);
    }, 15_000);

    it('polls at once when the stored revision is already past the cursor', async () => {
      const sid = sessionId();
      await updateOn(b, sid, 5);
      await routeOn(a, watchRequest(sid, 3));
      expect(actionsFor(sid)).toEqual(['poll']);
      expect(edge.requests.find((rpc) => rpc.request.session_id === sid)?.request.cursor).toBeUndefined();
    });

    /** A watch on `router`, once it waits: its answer (wrapped, so awaiting this does not await it). */
    const waitingOn = async (router: RunningRouter, request: EdgeAgentRequest, actor = 'user-1') => {
      const before = router.app.get(WatchService).waiting;
      const watching = router.app.get(EdgeAgentService).route({ actor_id: actor, request });
      await pollUntil(
        () => router.app.get(WatchService).waiting,
        (count) => count === before + 1,
        ROUTER_POLL,
      );
      return { answer: watching };
    };

    it('answers with the state it journaled itself when that woke the watch, without asking the edge', async () => {
      const sid = sessionId();
      await updateOn(a, sid, 1);
      const watching = await waitingOn(a, watchRequest(sid, 1));
      const snapshot = result('ok', {
        session_id: sid,
        revision: 2,
        messages: [{ role: 'user', text: 'journaled' }],
      });
      await a.app
        .get(JournalSequencerService)
        .record(sessionUpdate({ session_id: sid, revision: 2, edge_id: EDGE, snapshot }));
      expect(await watching.answer).toEqual(snapshot);
      expect(actionsFor(sid)).toEqual([]);
      expect(a.app.get(JournaledSnapshots).size).toBe(0);
    });

    it("asks the edge when the journaled state is another owner's, another access's, or closed", async () => {
      const sid = sessionId();
      await updateOn(a, sid, 1);
      // Another caller's watch of the session: the edge's own scope check answers it.
      const foreign = await waitingOn(a, watchRequest(sid, 1), 'user-2');
      const otherAccess = await waitingOn(a, { ...watchRequest(sid, 1), access_id: 'f'.repeat(32) });
      await updateOn(a, sid, 2);
      await foreign.answer;
      await otherAccess.answer;
      expect(actionsFor(sid)).toEqual(['poll', 'poll']);
      const closing = await waitingOn(a, watchRequest(sid, 2));
      await a.app.get(JournalSequencerService).record(
        sessionUpdate({
          session_id: sid,
          revision: 3,
          edge_id: EDGE,
          snapshot: result('session_closed', { session_id: sid, revision: 3, closed: true }),
        }),
      );
      expect(await closing.answer).toEqual(result('ok', { session_id: sid }));
      expect(actionsFor(sid)).toEqual(['poll', 'poll', 'poll']);
    });

    it('forwards watch unchanged to the edge when Redis does not know the session', async () => {
      const sid = sessionId();
      await routeOn(a, watchRequest(sid, 0));
      expect(actionsFor(sid)).toEqual(['watch']);
      expect(a.app.get(WatchService).waiting).toBe(0);
    });
  });

  describe('with a short wait', () => {
    // Its own namespace, so only short-wait replicas can take the request.
    let short: Suite;
    let shortEdge: ReturnType<typeof fakeEdge>;
    beforeAll(async () => {
      short = await createSuite('watchshort');
      shortEdge = fakeEdge(short, EDGE, (rpc) => result('ok', { session_id: rpc.request.session_id }));
      await shortEdge.ready();
    });
    afterAll(async () => {
      shortEdge.stop();
      await short.cleanup();
    });

    it('polls after the wait when nothing moves, over NATS, leaving no waiter behind', async () => {
      const router = await short.startRouter({ TETHER_WATCH_WAIT_MS: '300' });
      const sid = sessionId();
      await updateOn(router, sid, 4);
      const reply = await requestService(
        short.nc,
        short.subjects,
        'routerEdgeAgent',
        { actor_id: 'user-1', request: watchRequest(sid, 4) },
        { timeoutMs: 10_000 },
      );
      expect(reply).toEqual(result('ok', { session_id: sid }));
      expect(shortEdge.actions()).toEqual(['poll']);
      expect(router.app.get(WatchService).waiting).toBe(0);
    });
  });
});
