import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BINDINGS_FILE,
  BINDINGS_FILE_MAX_BYTES,
  BINDINGS_MAX,
  BindingStore,
  BindingStoreError,
  type AgentBinding,
} from './bindings.js';

const binding = (session: string, owner = '1'): AgentBinding => ({
  owner,
  access: 'a'.repeat(32),
  session,
  thread: '0199aaaa-0000-7000-8000-000000000000',
  project: '/home/me/project',
  access_project: '/home/me/project',
  installation_id: 'f'.repeat(32),
});
const sessionId = (n: number): string => n.toString(16).padStart(32, '0');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'edge-bindings-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('BindingStore', () => {
  it('writes version 1 atomically with mode 0600 and reads it back in a new store', async () => {
    const store = new BindingStore(dir);
    await store.put(binding(sessionId(1)));
    await store.put(binding(sessionId(2)));
    const file = join(dir, BINDINGS_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual([BINDINGS_FILE]); // No temp file is left behind.
    const reread = new BindingStore(dir);
    expect(await reread.count()).toBe(2);
    expect(await reread.get('1', 'a'.repeat(32), sessionId(2))).toEqual(binding(sessionId(2)));
    // Keyed by owner too: another owner never sees it.
    expect(await reread.get('2', 'a'.repeat(32), sessionId(2))).toBeUndefined();
    expect(await reread.remove('1', 'a'.repeat(32), sessionId(1))).toBe(true);
    expect(await reread.remove('1', 'a'.repeat(32), sessionId(1))).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, bindings: [binding(sessionId(2))] });
  });

  it('refuses a new binding beyond the bound, but replaces an existing one', async () => {
    const bindings = Array.from({ length: BINDINGS_MAX }, (_, n) => binding(sessionId(n)));
    writeFileSync(join(dir, BINDINGS_FILE), JSON.stringify({ version: 1, bindings }));
    const store = new BindingStore(dir);
    await expect(store.put(binding(sessionId(BINDINGS_MAX)))).rejects.toBeInstanceOf(BindingStoreError);
    await expect(store.put({ ...binding(sessionId(0)), thread: 'other' })).resolves.toBeUndefined();
    expect(await store.count()).toBe(BINDINGS_MAX);
  });

  it.each([
    ['an unknown top-level field', JSON.stringify({ version: 1, bindings: [], extra: 1 })],
    ['another version', JSON.stringify({ version: 2, bindings: [] })],
    [
      'an unknown binding field',
      JSON.stringify({ version: 1, bindings: [{ ...binding(sessionId(1)), x: 1 }] }),
    ],
    ['a short session id', JSON.stringify({ version: 1, bindings: [binding('abc')] })],
    ['not JSON', '{'],
    ['an oversized file', ' '.repeat(BINDINGS_FILE_MAX_BYTES + 1)],
  ])('refuses %s and leaves the file alone', async (_label, body) => {
    const file = join(dir, BINDINGS_FILE);
    writeFileSync(file, body);
    const store = new BindingStore(dir);
    await expect(store.count()).rejects.toBeInstanceOf(BindingStoreError);
    await expect(store.put(binding(sessionId(1)))).rejects.toBeInstanceOf(BindingStoreError);
    expect(readFileSync(file, 'utf8')).toBe(body);
  });

  it('refuses an invalid binding without touching the store', async () => {
    const store = new BindingStore(dir);
    await expect(store.put({ ...binding(sessionId(1)), owner: '' })).rejects.toBeInstanceOf(
      BindingStoreError,
    );
    expect(await store.count()).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps bindings in memory when it has no directory', async () => {
    const store = new BindingStore(null);
    await store.put(binding(sessionId(1)));
    expect(await store.get('1', 'a'.repeat(32), sessionId(1))).toEqual(binding(sessionId(1)));
  });
});
