// Durable history over HTTP with the real services and the scripted edge: windowed sends and
// transcript pages, rename, the archived snapshot once the edge is gone, delete, and the audit
// trail of it all (reference §2.3, §4, §7 edge_agent_history_test.go).
import pg from 'pg';
import { jest } from '@jest/globals';
import {
  type ApiClient,
  type TestDatabase,
  type Snapshot,
  eventually,
  sessionBase,
  startSession,
  watchUntilIdle,
} from '#test-support';
import type { Stack } from '../../scripts/stack/launcher.js';
import { printOutputOnFailure, startE2eStack, type E2eStack } from '../support/e2e-stack.js';

jest.setTimeout(120_000);

const FIRST_PROMPT = 'first round: remember the word pelican';
const SECOND_PROMPT = 'second round: and now the word walrus';

let e2e: E2eStack;
let database: TestDatabase;
let stack: Stack;
let projectDir: string;
const owner = `hist${Date.now() % 100000}`;
let alice: ApiClient;

beforeAll(async () => {
  e2e = await startE2eStack({
    label: 'e2ehistory',
    owner,
    stack: { historyKey: 'e2e-history-at-rest-key-0123456789abcdef' },
  });
  ({ stack, database, projectDir } = e2e);
  alice = e2e.owner;
});

afterAll(async () => {
  await e2e?.close();
});
printOutputOnFailure(() => stack, 120);

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

test('two sends, a transcript page, rename, an offline archived poll, delete, and their audit', async () => {
  const started = await startSession(alice, stack.edge!.id, projectDir, { name: 'history' });
  const { edgeId, sessionId } = started;
  const base = sessionBase(started);

  // Round one, then round two: the edge resets its window, and history archives round one from
  // the journal once it applies the first row of round two.
  expect((await alice.agent<Snapshot>({ ...base, action: 'send', text: FIRST_PROMPT })).status).toBe('ok');
  const first = await watchUntilIdle(alice, base, started.revision);
  expect((await alice.agent<Snapshot>({ ...base, action: 'send', text: SECOND_PROMPT })).status).toBe('ok');
  const second = await watchUntilIdle(alice, base, first.revision ?? 0);
  expect(second.window).toBe(1);
  expect(second.messages?.[0]?.text).toBe(SECOND_PROMPT);

  const page = await eventually(async () => {
    const reply = await alice.agent<Snapshot>({ ...base, action: 'transcript', history_before: '1' });
    return reply.status === 'ok' ? reply : undefined;
  }, 'the archived page of round one');
  expect(page).toMatchObject({ status: 'ok', window: 0, archived: true, closed: true });
  expect(page.messages?.[0]).toEqual(expect.objectContaining({ role: 'user', text: FIRST_PROMPT }));

  const renamed = await alice.agent<Snapshot>({ ...base, action: 'rename', title: 'Birds and walruses' });
  expect(renamed).toMatchObject({ status: 'ok', archived: true, title: 'Birds and walruses' });
  const live = await alice.agent<Snapshot>({ ...base, action: 'poll' });
  expect(live.title).toBe('Birds and walruses');

  // History holds the final state before the edge goes away.
  await eventually(async () => {
    const rows = await query<{ revision: string }>(
      'SELECT revision::text AS revision FROM session_histories WHERE session_id = $1',
      [sessionId],
    );
    return Number(rows[0]?.revision ?? 0) >= (second.revision ?? 0) ? true : undefined;
  }, 'the final state reaching history');
  const stored = await query<{ payload: Buffer }>(
    'SELECT payload FROM session_histories WHERE session_id = $1',
    [sessionId],
  );
  expect(stored[0]?.payload.includes('walrus')).toBe(false);

  await stack.kill('edge');
  const offline = await eventually(async () => {
    const reply = await alice.agent<Snapshot>({ ...base, action: 'poll' });
    return reply.archived ? reply : undefined;
  }, 'the archived snapshot answering for the stopped edge');
  expect(offline).toMatchObject({
    status: 'ok',
    closed: true,
    running: false,
    title: 'Birds and walruses',
    history_persistent: true,
  });
  expect(offline.models).toBeUndefined();
  expect(offline.messages?.[0]?.text).toBe(SECOND_PROMPT);

  await expect(alice.agent<Snapshot>({ ...base, action: 'delete' })).resolves.toMatchObject({
    status: 'ok',
    history_persistent: true,
  });
  await expect(alice.agent<Snapshot>({ ...base, action: 'poll' })).resolves.toMatchObject({
    status: 'not_found',
  });

  // One audit record per mutating call (start, send ×2, rename, delete), none with request text.
  const audit = await eventually(async () => {
    const rows = await query<Record<string, unknown>>(
      'SELECT * FROM audit_records WHERE actor_id = $1 ORDER BY occurred_at',
      [owner],
    );
    return rows.length >= 5 ? rows : undefined;
  }, 'the audit records reaching history');
  expect(audit.map((row) => row.action)).toEqual(['start', 'send', 'send', 'rename', 'delete']);
  expect(audit.every((row) => row.edge_id === edgeId && row.success === true)).toBe(true);
  expect(audit.slice(1).every((row) => row.session_id === sessionId)).toBe(true);
  const text = JSON.stringify(audit);
  for (const secret of ['pelican', 'walrus', 'Birds', projectDir]) expect(text).not.toContain(secret);
});
