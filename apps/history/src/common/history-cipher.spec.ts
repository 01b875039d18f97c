import { Aad, HistoryCipher, HistoryDecryptError } from './history-cipher.js';

const scope = { ownerId: 'alice', accessId: 'a'.repeat(32), edgeId: 7n, sessionId: 's'.repeat(32) };

describe('HistoryCipher', () => {
  const cipher = new HistoryCipher('history-key-for-unit-tests-0123456789');

  it('round-trips and never stores the plaintext', () => {
    const stored = cipher.encryptJson({ text: 'the secret prompt' }, Aad.payload(scope));
    expect(Buffer.from(stored).includes('secret prompt')).toBe(false);
    expect(stored[0]).toBe(1);
    expect(cipher.decryptJson(stored, Aad.payload(scope))).toEqual({ text: 'the secret prompt' });
  });

  it('refuses a value copied to another scope or column', () => {
    const stored = cipher.encrypt('hello', Aad.payload(scope));
    expect(() => cipher.decrypt(stored, Aad.payload({ ...scope, ownerId: 'mallory' }))).toThrow(
      HistoryDecryptError,
    );
    expect(() => cipher.decrypt(stored, Aad.title(scope))).toThrow(HistoryDecryptError);
    expect(() => cipher.decrypt(cipher.encrypt('x', Aad.page(scope, 1)), Aad.page(scope, 2))).toThrow(
      HistoryDecryptError,
    );
  });

  it('refuses another key, a tampered byte and a truncated value', () => {
    const stored = cipher.encrypt('hello', Aad.payload(scope));
    const other = new HistoryCipher('another-history-key-0123456789abcdef');
    expect(() => other.decrypt(stored, Aad.payload(scope))).toThrow(HistoryDecryptError);
    const tampered = Uint8Array.from(stored);
    tampered[20] = (tampered[20] ?? 0) ^ 1;
    expect(() => cipher.decrypt(tampered, Aad.payload(scope))).toThrow(HistoryDecryptError);
    expect(() => cipher.decrypt(stored.subarray(0, 10), Aad.payload(scope))).toThrow(HistoryDecryptError);
  });

  it('gives every value its own nonce across pool refills, and each still decrypts', () => {
    const count = 1_000; // several refills of the 256-nonce pool
    const nonces = new Set<string>();
    const stored = Array.from({ length: count }, (_, index) =>
      cipher.encrypt(`value ${index}`, Aad.title(scope)),
    );
    for (const [index, value] of stored.entries()) {
      nonces.add(Buffer.from(value.subarray(1, 13)).toString('hex'));
      expect(cipher.decrypt(value, Aad.title(scope))).toBe(`value ${index}`);
    }
    expect(nonces.size).toBe(count);
  });
});
