// Each router replica tells the api replicas it is alive, and that it is leaving once it has
// answered what it took on shutdown (apps/session-router/src/heartbeat).
import { jest } from '@jest/globals';
import { parseRouterHeartbeat, type RouterHeartbeat } from '#contracts';
import { decodeJson } from '#messaging';
import { pollUntil } from '#test-support';
import { createSuite, type Suite } from '../../support/router.js';

jest.setTimeout(30_000);

describe('router heartbeat', () => {
  let suite: Suite;

  beforeAll(async () => {
    suite = await createSuite('heartbeat');
  });
  afterAll(async () => {
    await suite.cleanup();
  });

  it('beats every second while it runs and says it is leaving when it closes', async () => {
    const heard: RouterHeartbeat[] = [];
    const subscription = suite.nc.subscribe(suite.subjects.routerHeartbeat, {
      callback: (_error, msg) => {
        const heartbeat = parseRouterHeartbeat(decodeJson(msg.data));
        if (heartbeat) heard.push(heartbeat);
      },
    });
    await suite.nc.flush();
    const router = await suite.startRouter();
    await pollUntil(
      () => heard.length,
      (count) => count >= 2,
      { timeoutMs: 5_000, intervalMs: 50 },
    );
    expect(heard.length).toBeGreaterThanOrEqual(2);
    expect(heard.every((one) => one.interval_ms === 1_000 && !one.leaving)).toBe(true);
    expect(new Set(heard.map((one) => one.instance)).size).toBe(1);

    await router.close();
    await pollUntil(
      () => heard.at(-1)?.leaving,
      (leaving) => leaving === true,
      { timeoutMs: 5_000 },
    );
    expect(heard.at(-1)).toEqual({ instance: heard[0]!.instance, interval_ms: 1_000, leaving: true });
    subscription.unsubscribe();
  });
});
