import type { JournalEntry } from '#contracts';
import { JournalCipher, JournalSealError } from './journal-cipher.js';

const KEY = 'journal-spec-key-0123456789abcdef0123456789';
const OLD_KEY = 'journal-spec-old-key-0123456789abcdef012345';
const ROW: JournalEntry = {
  v: 1,
  session_id: 's'.repeat(32),
  edge_id: '7',
  actor_id: 'alice',
  access_id: 'a'.repeat(32),
  epoch: 'e1',
  revision: 3,
  sequence: 2,
  prev_stream_seq: 10,
  snapshot: { version: 1, status: 'ok', messages: [{ role: 'user', text: 'the secret prompt' }] },
  emitted_at: 1,
  recorded_at: 2,
};

describe('JournalCipher', () => {
  it('seals the snapshot only, and opens it again', () => {
    const cipher = new JournalCipher(KEY);
    const sealed = cipher.seal(ROW);
    expect(JSON.stringify(sealed)).not.toContain('secret');
    expect('snapshot' in sealed).toBe(false);
    const { snapshot: _snapshot, ...ids } = ROW;
    expect(sealed).toMatchObject(ids);
    expect(cipher.open(sealed)).toEqual(ROW);
  });

  it('refuses a sealed snapshot moved to another row, owner, edge or position', () => {
    const cipher = new JournalCipher(KEY);
    const sealed = cipher.seal(ROW);
    for (const moved of [
      { session_id: 't'.repeat(32) },
      { actor_id: 'mallory' },
      { edge_id: '8' },
      { access_id: 'b'.repeat(32) },
      { epoch: 'e2' },
      { revision: 4 },
    ]) {
      expect(() => cipher.open({ ...sealed, ...moved })).toThrow(JournalSealError);
    }
  });

  it('refuses another key, a tampered byte and garbage', () => {
    const sealed = new JournalCipher(KEY).seal(ROW);
    expect(() => new JournalCipher(OLD_KEY).open(sealed)).toThrow(JournalSealError);
    const bytes = Buffer.from(sealed.sealed_snapshot, 'base64');
    bytes[bytes.length - 20]! ^= 1;
    const cipher = new JournalCipher(KEY);
    expect(() => cipher.open({ ...sealed, sealed_snapshot: bytes.toString('base64') })).toThrow(
      JournalSealError,
    );
    expect(() => cipher.open({ ...sealed, sealed_snapshot: 'not a sealed value' })).toThrow(JournalSealError);
  });

  it('opens rows sealed under a previous key during a rotation, and seals with the current one', () => {
    const before = new JournalCipher(OLD_KEY).seal(ROW);
    const rotated = new JournalCipher(KEY, [OLD_KEY]);
    expect(rotated.open(before)).toEqual(ROW);
    const after = rotated.seal(ROW);
    expect(() => new JournalCipher(OLD_KEY).open(after)).toThrow(JournalSealError);
    expect(new JournalCipher(KEY).open(after)).toEqual(ROW);
  });
});
