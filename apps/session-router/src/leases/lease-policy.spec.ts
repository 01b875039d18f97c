import { Limits } from '#contracts';
import { leaseDueAt, renewsLease } from './lease-policy.js';

describe('leaseDueAt', () => {
  const t0 = 1_000_000;
  it('uses the idle limit of a saved session while it is young', () => {
    expect(leaseDueAt({ saved: true, touched: t0, created: t0 })).toBe(t0 + Limits.SAVED_SESSION_IDLE_MS);
  });
  it('caps a saved session at its maximum age', () => {
    const created = t0 - Limits.SAVED_SESSION_MAX_AGE_MS + 1_000;
    expect(leaseDueAt({ saved: true, touched: t0, created })).toBe(t0 + 1_000);
  });
  it('uses the transient limits without an access', () => {
    expect(leaseDueAt({ saved: false, touched: t0, created: t0 })).toBe(
      t0 + Limits.TRANSIENT_SESSION_IDLE_MS,
    );
  });
  it('does not renew on snapshot, sessions, discover or directories', () => {
    expect(['snapshot', 'sessions', 'discover', 'directories'].some(renewsLease)).toBe(false);
    expect(['poll', 'watch', 'send', 'stop'].every(renewsLease)).toBe(true);
  });
});
