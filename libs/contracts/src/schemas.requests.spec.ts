// The internal request schemas: every request of the service RPCs, their bounds, audit records.
import type { RequestName } from './subjects.js';
import { auditRecordSchema, requestSchemas } from './schemas.js';

const SESSION = '0123456789abcdef0123456789abcdef';
const ACCESS = 'a'.repeat(32);

function parses(schema: { safeParse(value: unknown): { success: boolean } }, value: unknown): boolean {
  return schema.safeParse(value).success;
}

const access = {
  name: 'Work',
  kind: 'codex',
  edge_id: '42',
  installation_id: 'b'.repeat(32),
  project: '/home/me/p',
};
const VALID: { [K in RequestName]: Record<string, unknown> } = {
  routerEdgeAgent: {
    actor_id: '7',
    request: { edge_id: 42, action: 'poll', session_id: SESSION },
    project_root: '/p',
  },
  routerPresence: { edge_ids: ['1', '2'] },
  historyConnectorRotate: { actor_id: 'alice', edge_id: '7' },
  historyConnectorDelete: { actor_id: 'alice', edge_id: '7' },
  historyEdgeCredential: { edge_id: '7' },
  routerSessionUpdate: {
    edge_id: '42',
    edge_token: 't'.repeat(43),
    actor_id: '7',
    session_id: SESSION,
    revision: 2,
    snapshot: { version: 1, status: 'ok' },
    emitted_at: 1,
  },
  historyAuthorize: { actor_id: '7', edge_id: '42', access_id: ACCESS },
  historyAccessList: { actor_id: '7', page: 1, page_size: 20 },
  historyAccessCreate: { actor_id: '7', access },
  historyAccessUpdate: { actor_id: '7', id: ACCESS, access },
  historyAccessDelete: { actor_id: '7', id: ACCESS },
  historyConnectorList: { actor_id: '7' },
  historyConnectorEnroll: { actor_id: '7', name: 'laptop', device: 'host' },
  historySessions: { actor_id: '7', access_id: ACCESS, edge_id: '42', page: 1 },
  historyResumeSeed: { actor_id: '7', access_id: ACCESS, edge_id: '42', session_id: SESSION },
  historySnapshot: { actor_id: '7', access_id: ACCESS, edge_id: '42', session_id: SESSION },
  historyArchiveWindow: {
    actor_id: '7',
    access_id: ACCESS,
    edge_id: '42',
    session_id: SESSION,
    snapshot: { version: 1, status: 'ok', session_id: SESSION, revision: 3 },
  },
  historyRename: { actor_id: '7', access_id: ACCESS, edge_id: '42', session_id: SESSION, title: 'Plans' },
  historyDelete: { actor_id: '7', access_id: ACCESS, edge_id: '42', session_id: SESSION },
  historyTranscript: { actor_id: '7', access_id: ACCESS, edge_id: '42', session_id: SESSION, before: 2 },
  historyJournalPage: {
    actor_id: '7',
    access_id: ACCESS,
    edge_id: '42',
    session_id: SESSION,
    direction: 'after',
    cursor: { epoch: 'e1', sequence: 0 },
    limit: 200,
  },
  historyOpenSubmissions: {
    dispatch_state: 'pending',
    submitted_before: 1_800_000_000_000,
    after: {
      submitted_at: 1_799_000_000_000,
      session_id: SESSION,
      client_message_id: `1799000000000-${'a'.repeat(32)}`,
    },
    limit: 200,
  },
};
const names = Object.keys(VALID) as RequestName[];

/** Requests at and past their bounds: name, body, accepted. */
const BOUND_CASES: Array<[RequestName, Record<string, unknown>, boolean]> = [
  [
    'routerEdgeAgent',
    {
      ...VALID.routerEdgeAgent,
      request: { edge_id: 42, action: 'watch', session_id: SESSION, cursor: '-1' },
    },
    false,
  ],
  [
    'routerEdgeAgent',
    { ...VALID.routerEdgeAgent, request: { edge_id: 42, action: 'snapshot', session_id: SESSION } },
    false,
  ],
  ['routerEdgeAgent', { ...VALID.routerEdgeAgent, project_root: 'p'.repeat(4096) }, true],
  ['routerEdgeAgent', { ...VALID.routerEdgeAgent, project_root: 'p'.repeat(4097) }, false],
  ['routerPresence', { edge_ids: Array.from({ length: 100 }, (_, i) => String(i + 1)) }, true],
  ['routerPresence', { edge_ids: Array.from({ length: 101 }, (_, i) => String(i + 1)) }, false],
  ['routerPresence', { edge_ids: ['0'] }, false],
  ['routerSessionUpdate', { ...VALID.routerSessionUpdate, revision: -1 }, false],
  ['historyAccessList', { ...VALID.historyAccessList, page: 0 }, false],
  ['historyAccessList', { ...VALID.historyAccessList, page_size: 0 }, false],
  ['historyAccessList', { ...VALID.historyAccessList, page_size: 100 }, true],
  ['historyAccessList', { ...VALID.historyAccessList, page_size: 101 }, false],
  ['historyAccessCreate', { actor_id: '7', access: { ...access, name: 'n'.repeat(200) } }, true],
  ['historyAccessCreate', { actor_id: '7', access: { ...access, name: 'n'.repeat(201) } }, false],
  ['historyAccessCreate', { actor_id: '7', access: { ...access, name: '' } }, false],
  ['historyAccessCreate', { actor_id: '7', access: { ...access, project: 'p'.repeat(4097) } }, false],
  ['historyAccessCreate', { actor_id: '7', access: { ...access, installation_id: 'i'.repeat(65) } }, false],
  ['historyAccessCreate', { actor_id: '7', access: { ...access, extra: 1 } }, false],
  ['historyAccessUpdate', { ...VALID.historyAccessUpdate, id: 'i'.repeat(64) }, true],
  ['historyAccessUpdate', { ...VALID.historyAccessUpdate, id: 'i'.repeat(65) }, false],
  ['historyConnectorEnroll', { actor_id: '7', name: 'n'.repeat(201) }, false],
  ['historySessions', { ...VALID.historySessions, page: 100_000 }, true],
  ['historySessions', { ...VALID.historySessions, page: 100_001 }, false],
  ['historySessions', { ...VALID.historySessions, edge_id: 'abc' }, false],
  ['historyResumeSeed', { ...VALID.historyResumeSeed, session_id: 's'.repeat(31) }, false],
  ['historyResumeSeed', { ...VALID.historyResumeSeed, session_id: 's/'.repeat(16) }, false],
  ['historyResumeSeed', { ...VALID.historyResumeSeed, stream_sequence: 12 }, true],
  ['historyResumeSeed', { ...VALID.historyResumeSeed, stream_sequence: -1 }, false],
  ['historySnapshot', { ...VALID.historySnapshot, access_id: '' }, false],
  ['historyArchiveWindow', { ...VALID.historyArchiveWindow, snapshot: { version: 1 } }, false],
  ['historyRename', { ...VALID.historyRename, title: '界'.repeat(120) }, true],
  ['historyRename', { ...VALID.historyRename, title: '界'.repeat(121) }, false],
  ['historyRename', { ...VALID.historyRename, title: '   ' }, false],
  ['historyRename', { ...VALID.historyRename, title: 'a\nb' }, false],
  ['historyTranscript', { ...VALID.historyTranscript, before: -1 }, false],
  ['historyTranscript', { actor_id: '7', access_id: ACCESS, edge_id: '42', session_id: SESSION }, true],
  ['historyJournalPage', { ...VALID.historyJournalPage, limit: 201 }, false],
  ['historyJournalPage', { ...VALID.historyJournalPage, limit: 0 }, false],
  ['historyJournalPage', { ...VALID.historyJournalPage, limit: 1.5 }, false],
  ['historyJournalPage', { ...VALID.historyJournalPage, direction: 'sideways' }, false],
  ['historyJournalPage', { ...VALID.historyJournalPage, cursor: { epoch: '', sequence: 1 } }, false],
  ['historyJournalPage', { ...VALID.historyJournalPage, cursor: { epoch: 'e', sequence: -1 } }, false],
];

describe('requestSchemas', () => {
  it.each(names)('%s accepts a valid request', (name) => {
    expect(parses(requestSchemas[name], VALID[name])).toBe(true);
  });
  it.each(names)('%s refuses an unknown field', (name) => {
    expect(parses(requestSchemas[name], { ...VALID[name], extra: 1 })).toBe(false);
  });
  it.each(names.filter((name) => name !== 'routerPresence'))(
    '%s refuses an actor id of 33 characters',
    (name) => {
      expect(parses(requestSchemas[name], { ...VALID[name], actor_id: '9'.repeat(33) })).toBe(false);
    },
  );

  it.each(BOUND_CASES)('%s bound case %#', (name, body, ok) => {
    expect(parses(requestSchemas[name], body)).toBe(ok);
  });

  it('normalizes the edge id of the request the router receives', () => {
    expect(requestSchemas.routerEdgeAgent.parse(VALID.routerEdgeAgent).request.edge_id).toBe('42');
  });
});

describe('requestSchemas', () => {
  it('takes audit records of ids and outcome only', () => {
    const record = {
      v: 1,
      id: 'f'.repeat(32),
      actor_id: '7',
      action: 'send',
      edge_id: '42',
      session_id: SESSION,
      status: 'ok',
      success: true,
      trace_id: '0'.repeat(32),
      occurred_at: 1,
    };
    expect(parses(auditRecordSchema, record)).toBe(true);
    expect(parses(auditRecordSchema, { ...record, text: 'prompt' })).toBe(false);
    // A refused call of any client action is audited, and one that named no action as `invalid`.
    expect(parses(auditRecordSchema, { ...record, action: 'poll' })).toBe(true);
    expect(parses(auditRecordSchema, { ...record, action: 'invalid' })).toBe(true);
    expect(parses(auditRecordSchema, { ...record, action: 'snapshot' })).toBe(false);
    // Ids as refused calls sent them, when storable; never a NUL, a control character or 200 KB.
    expect(parses(auditRecordSchema, { ...record, edge_id: '0', session_id: 'null' })).toBe(true);
    expect(parses(auditRecordSchema, { ...record, session_id: 'a\u0000b' })).toBe(false);
    expect(parses(auditRecordSchema, { ...record, session_id: 's'.repeat(200_000) })).toBe(false);
    expect(parses(auditRecordSchema, { ...record, actor_id: 'al\u0000ice' })).toBe(false);
    expect(parses(auditRecordSchema, { ...record, status: 'Not A Status' })).toBe(false);
  });

  it('keeps the router request edge id canonical', () => {
    const parsed = requestSchemas.routerEdgeAgent.parse(VALID.routerEdgeAgent);
    expect(parsed.request.edge_id).toBe('42');
  });
});
