import { LEASE_INDEX_SHARDS, RedisKeys } from './redis-keys.js';

/** Redis Cluster's key slot: CRC16 (XMODEM) of the hash tag, or of the key without one, mod 16384. */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}

describe('Redis keys on a cluster', () => {
  const keys = new RedisKeys('tether');
  const sid = '0123456789abcdef0123456789abcdef';

  it('computes slots as Redis does', () => {
    // Reference values from `CLUSTER KEYSLOT` on Redis 7.
    expect(slotOf('123456789')).toBe(12_739);
    expect(slotOf('foo')).toBe(12_182);
    expect(slotOf('{user1000}.following')).toBe(slotOf('user1000'));
  });

  it("puts every per-session key in the session's one slot, whatever its id", () => {
    const perSession = (id: string) => [
      keys.revision(id),
      keys.epoch(id),
      keys.sequence(id),
      keys.streamSequence(id),
      keys.edgeStreamSequence(id),
      keys.meta(id),
      keys.titleOverride(id),
      keys.fence(id),
      keys.operation(id, 'op-1'),
      keys.operations(id),
      keys.operationMark(id, 'op-1', 'sweep'),
      keys.prompt(id, 'approval', 'p-1'),
      keys.lease(id),
      `tether:{${id}}:lifecycle`,
    ];
    for (const id of [sid, 'ffffffffffffffffffffffffffffffff', '00000000000000000000000000000001']) {
      expect(new Set(perSession(id).map(slotOf)).size).toBe(1);
    }
    expect(slotOf(keys.revision(sid))).not.toBe(slotOf(keys.revision('ffffffffffffffffffffffffffffffff')));
  });

  it('spreads the lease index shards over slots, each shard one slot', () => {
    const slots = Array.from({ length: LEASE_INDEX_SHARDS }, (_, shard) => slotOf(keys.leases(shard)));
    expect(new Set(slots).size).toBe(LEASE_INDEX_SHARDS);
    expect(keys.leaseShard(sid)).toBe(keys.leaseShard(sid));
    expect(keys.leaseShard(sid)).toBeLessThan(LEASE_INDEX_SHARDS);
  });
});
