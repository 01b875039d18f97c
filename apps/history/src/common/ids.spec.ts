import { newAccessId, parseEdgeId, requireActorId } from './ids.js';
import { InvalidRequestError } from './errors.js';

describe('parseEdgeId', () => {
  it('accepts canonical decimal ids that fit a Postgres bigint', () => {
    expect(parseEdgeId('1')).toBe(1n);
    expect(parseEdgeId('9223372036854775807')).toBe(9_223_372_036_854_775_807n);
  });

  it('refuses anything that cannot name a connector', () => {
    for (const id of ['', '0', '01', '-1', '1.5', ' 1', 'abc', '9223372036854775808', '1'.repeat(25)]) {
      expect(parseEdgeId(id)).toBeNull();
    }
  });
});

describe('requireActorId', () => {
  it('refuses a missing or empty actor, which would otherwise filter nothing', () => {
    expect(() => requireActorId(undefined)).toThrow(InvalidRequestError);
    expect(() => requireActorId('')).toThrow(InvalidRequestError);
    expect(requireActorId('alice')).toBe('alice');
  });
});

describe('newAccessId', () => {
  it('is 32 lowercase hex characters', () => {
    expect(newAccessId()).toMatch(/^[0-9a-f]{32}$/);
  });
});
