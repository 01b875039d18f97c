import { ROUTER_REPLICAS_MAX, RouterLiveness } from './router-liveness.js';

const A = 'a'.repeat(24);
const B = 'b'.repeat(24);

describe('RouterLiveness', () => {
  it('loses a replica once three of its intervals pass without a heartbeat, and only once', () => {
    const liveness = new RouterLiveness();
    liveness.heard({ instance: A, interval_ms: 1_000 }, 0);
    liveness.heard({ instance: B, interval_ms: 200 }, 0);
    expect(liveness.lost(600)).toEqual([]);
    expect(liveness.lost(601)).toEqual([B]);
    liveness.heard({ instance: A, interval_ms: 1_000 }, 2_500);
    expect(liveness.lost(5_500)).toEqual([]);
    expect(liveness.lost(5_501)).toEqual([A]);
    expect(liveness.lost(60_000)).toEqual([]);
    expect(liveness.size).toBe(0);
  });

  it('forgets a replica that says it is leaving, without counting it lost', () => {
    const liveness = new RouterLiveness();
    liveness.heard({ instance: A, interval_ms: 1_000 }, 0);
    liveness.heard({ instance: A, interval_ms: 1_000, leaving: true }, 500);
    expect(liveness.size).toBe(0);
    expect(liveness.lost(10_000)).toEqual([]);
  });

  it('counts silence again from our own reconnection', () => {
    const liveness = new RouterLiveness();
    liveness.heard({ instance: A, interval_ms: 1_000 }, 0);
    liveness.reconnected(2_900);
    expect(liveness.lost(5_000)).toEqual([]);
    expect(liveness.lost(5_901)).toEqual([A]);
  });

  it('tracks at most ROUTER_REPLICAS_MAX replicas, still hearing the ones it tracks', () => {
    const liveness = new RouterLiveness();
    const id = (n: number) => n.toString(16).padStart(24, '0');
    for (let n = 0; n < ROUTER_REPLICAS_MAX + 50; n += 1)
      liveness.heard({ instance: id(n), interval_ms: 100 }, 0);
    expect(liveness.size).toBe(ROUTER_REPLICAS_MAX);
    liveness.heard({ instance: id(0), interval_ms: 100 }, 1_000);
    expect(liveness.lost(1_200)).toHaveLength(ROUTER_REPLICAS_MAX - 1);
    expect(liveness.lost(1_301)).toEqual([id(0)]);
  });
});
