import {
  edgeAgentRequestSchema,
  edgeAgentResultSchema,
  edgeAgentRpcRequestSchema,
  heartbeatSchema,
  journalEntrySchema,
  lifecycleEventSchema,
  validateEdgeAgentRequest,
} from './schemas.js';

const SESSION = '0123456789abcdef0123456789abcdef';
const ACCESS = 'a'.repeat(32);
const OPAQUE = 'c'.repeat(32);

function parses(schema: { safeParse(value: unknown): { success: boolean } }, value: unknown): boolean {
  return schema.safeParse(value).success;
}

describe('edgeAgentRequestSchema (HTTP body)', () => {
  const poll = { edge_id: '42', action: 'poll', session_id: SESSION };

  it.each([
    ['a JSON number', 42, '42'],
    ['a decimal string', '42', '42'],
    ['a decimal string with leading zeros', '0042', '42'],
    ['the largest safe integer', Number.MAX_SAFE_INTEGER, String(Number.MAX_SAFE_INTEGER)],
    ['2^64-1 as a string', '18446744073709551615', '18446744073709551615'],
    ['0 (refused later by the rules)', 0, '0'],
  ])('normalizes edge_id given as %s', (_name, edgeId, expected) => {
    const parsed = edgeAgentRequestSchema.safeParse({ ...poll, edge_id: edgeId });
    expect(parsed.success).toBe(true);
    expect(parsed.data?.edge_id).toBe(expected);
  });

  it.each([
    ['a negative number', -1],
    ['a fraction', 1.5],
    ['an unsafe integer', 2 ** 53],
    ['2^64 as a string', '18446744073709551616'],
    ['an empty string', ''],
    ['a signed string', '-1'],
    ['a string with spaces', ' 42'],
    ['an exponent string', '1e3'],
    ['a hex string', '0x2a'],
    ['a boolean', true],
    ['null', null],
  ])('refuses edge_id given as %s', (_name, edgeId) => {
    expect(parses(edgeAgentRequestSchema, { ...poll, edge_id: edgeId })).toBe(false);
  });

  it('requires edge_id and action', () => {
    expect(parses(edgeAgentRequestSchema, { action: 'poll', session_id: SESSION })).toBe(false);
    expect(parses(edgeAgentRequestSchema, { edge_id: '42', session_id: SESSION })).toBe(false);
  });

  it.each(['snapshot', 'expire', 'exec', ''])('refuses action %j over HTTP', (action) => {
    expect(parses(edgeAgentRequestSchema, { ...poll, action })).toBe(false);
  });

  it.each([
    ['an unknown top-level field', { ...poll, extra: 1 }],
    ['actor_id (injected by Tether only)', { ...poll, actor_id: '7' }],
    ['project_root (injected by Tether only)', { ...poll, project_root: '/p' }],
    ['resume (injected by Tether only)', { ...poll, resume: { session_id: SESSION, revision: 1 } }],
    ['reset_revision (injected by Tether only)', { ...poll, reset_revision: 1 }],
    ['an unknown field in file', { ...poll, action: 'file_list', file: { path: 'a', mode: 'rw' } }],
    [
      'an unknown field in an answer',
      { ...poll, action: 'answer', answers: [{ question_id: 'q', answers: ['a'], x: 1 }] },
    ],
  ])('refuses %s', (_name, body) => {
    expect(parses(edgeAgentRequestSchema, body)).toBe(false);
  });
});

describe('edgeAgentRequestSchema (HTTP body)', () => {
  const poll = { edge_id: '42', action: 'poll', session_id: SESSION };

  it.each([
    ['text as a number', { text: 5 }],
    ['session_id as null', { session_id: null }],
    ['cursor as a number', { cursor: 5 }],
    ['history_page as a number', { history_page: 1 }],
    ['attachments as a string', { attachments: 'a' }],
    ['attachments holding a number', { attachments: [1] }],
    ['answers as an object', { answers: { question_id: 'q', answers: ['a'] } }],
    ['an answer list as a string', { answers: [{ question_id: 'q', answers: 'a' }] }],
    ['file as an array', { file: [] }],
    ['file.offset as a string', { file: { offset: '5' } }],
    ['file.offset as a fraction', { file: { offset: 1.5 } }],
    ['file.size as an unsafe integer', { file: { size: 2 ** 60 } }],
    ['file.data that is not base64', { file: { data: 'not base64!' } }],
    ['file.data with bad padding', { file: { data: 'AA=A' } }],
    [
      'file.data decoding to 128 KiB + 1',
      { file: { data: Buffer.alloc(128 * 1024 + 1).toString('base64') } },
    ],
  ])('refuses the wrong type: %s', (_name, fields) => {
    expect(parses(edgeAgentRequestSchema, { ...poll, ...fields })).toBe(false);
  });

  it('accepts file.data of exactly 128 KiB, padded or not', () => {
    const data = Buffer.alloc(128 * 1024).toString('base64');
    const body = {
      ...poll,
      action: 'file_write',
      access_id: ACCESS,
      file: { transfer_id: OPAQUE, offset: 0, data },
    };
    expect(parses(edgeAgentRequestSchema, body)).toBe(true);
    expect(parses(edgeAgentRequestSchema, { ...body, file: { ...body.file, data: 'aGk' } })).toBe(true);
  });

  it('lets type-correct but rule-breaking values through to the rules', () => {
    const parsed = edgeAgentRequestSchema.safeParse({ ...poll, action: 'watch', cursor: '-1' });
    expect(parsed.success).toBe(true);
    expect(validateEdgeAgentRequest(parsed.data!).ok).toBe(false);
    const negative = edgeAgentRequestSchema.safeParse({ ...poll, action: 'file_list', file: { offset: -5 } });
    expect(negative.success).toBe(true);
    expect(validateEdgeAgentRequest(negative.data!).ok).toBe(false);
  });

  it('reads a missing question_id or answer list as empty (proto3 omits empty fields)', () => {
    const parsed = edgeAgentRequestSchema.safeParse({ ...poll, action: 'answer', answers: [{}] });
    expect(parsed.data?.answers).toEqual([{ question_id: '', answers: [] }]);
  });

  it('decodes a full valid request unchanged apart from edge_id', () => {
    const body = {
      edge_id: 7,
      action: 'send',
      session_id: SESSION,
      access_id: ACCESS,
      text: 'hello',
      skill_id: OPAQUE,
      attachments: [`.liaison-attachments/${SESSION}/a.png`],
    };
    const parsed = edgeAgentRequestSchema.parse(body);
    expect(parsed).toEqual({ ...body, edge_id: '7' });
    expect(validateEdgeAgentRequest(parsed)).toEqual({ ok: true });
  });
});

describe('edgeAgentRpcRequestSchema', () => {
  const rpc = { version: 1, actor_id: '7', request: { edge_id: '42', action: 'poll', session_id: SESSION } };

  it('accepts an envelope and internal actions', () => {
    expect(parses(edgeAgentRpcRequestSchema, rpc)).toBe(true);
    expect(
      parses(edgeAgentRpcRequestSchema, { ...rpc, request: { ...rpc.request, action: 'snapshot' } }),
    ).toBe(true);
    expect(parses(edgeAgentRpcRequestSchema, { ...rpc, request: { ...rpc.request, action: 'expire' } })).toBe(
      true,
    );
  });

  it('accepts a resume envelope with its seed', () => {
    const resume = {
      session_id: SESSION,
      revision: 4,
      window: 1,
      title: 't',
      messages: [{ role: 'user', text: 'hi', attachments: [{ name: 'a.png', size: 3 }] }],
      activities: [{ id: 'x', kind: 'command', exit_code: 0, changes: [{ path: 'a' }] }],
    };
    const body = {
      ...rpc,
      request: { ...rpc.request, action: 'resume', access_id: ACCESS },
      resume,
      project_root: '/p',
    };
    expect(parses(edgeAgentRpcRequestSchema, body)).toBe(true);
  });

  it.each([
    ['an unknown top-level field', { ...rpc, extra: true }],
    ['an unknown request field', { ...rpc, request: { ...rpc.request, extra: true } }],
    [
      'an unknown resume field',
      { ...rpc, resume: { session_id: SESSION, revision: 1, thread_id: 'native' } },
    ],
    [
      'an unknown field in a seed message',
      { ...rpc, resume: { session_id: SESSION, revision: 1, messages: [{ role: 'user', x: 1 }] } },
    ],
    ['a negative reset_revision', { ...rpc, reset_revision: -1 }],
    ['a version string', { ...rpc, version: '1' }],
    ['a missing actor_id', { version: 1, request: rpc.request }],
    ['an unknown action', { ...rpc, request: { ...rpc.request, action: 'exec' } }],
  ])('refuses %s', (_name, body) => {
    expect(parses(edgeAgentRpcRequestSchema, body)).toBe(false);
  });
});

describe('edgeAgentResultSchema', () => {
  it('requires version and status', () => {
    expect(parses(edgeAgentResultSchema, { version: 1, status: 'ok' })).toBe(true);
    expect(parses(edgeAgentResultSchema, { status: 'ok' })).toBe(false);
    expect(parses(edgeAgentResultSchema, { version: 1 })).toBe(false);
    expect(parses(edgeAgentResultSchema, { version: '1', status: 'ok' })).toBe(false);
  });

  it('tolerates unknown fields from a newer edge, at the top and nested, and drops them', () => {
    const parsed = edgeAgentResultSchema.parse({
      version: 1,
      status: 'ok',
      attention: true,
      messages: [{ role: 'assistant', text: 'hi', reply_token: 'x' }],
      activities: [{ id: 'a', kind: 'command', label: 'x', exit_code: null }],
    });
    expect(parsed).toEqual({
      version: 1,
      status: 'ok',
      messages: [{ role: 'assistant', text: 'hi' }],
      activities: [{ id: 'a', kind: 'command', exit_code: null }],
    });
  });

  it('maps a status outside the allow-list to unavailable and keeps resume_unavailable', () => {
    expect(edgeAgentResultSchema.parse({ version: 1, status: 'exploded' }).status).toBe('unavailable');
    expect(edgeAgentResultSchema.parse({ version: 1, status: 'resume_unavailable' }).status).toBe(
      'resume_unavailable',
    );
  });

  it('keeps 0 and null in turn timing and request_service_ms', () => {
    const parsed = edgeAgentResultSchema.parse({
      version: 1,
      status: 'ok',
      turn_timing: { dispatch_ms: 0, first_reply_ms: null },
      request_service_ms: 0,
    });
    expect(parsed.turn_timing).toEqual({ dispatch_ms: 0, first_reply_ms: null });
    expect(parsed.request_service_ms).toBe(0);
  });

  it('refuses a known field of the wrong type', () => {
    expect(parses(edgeAgentResultSchema, { version: 1, status: 'ok', revision: '3' })).toBe(false);
    expect(parses(edgeAgentResultSchema, { version: 1, status: 'ok', messages: [{ role: 1 }] })).toBe(false);
  });
});

const HEARTBEAT = {
  edge_id: '42',
  edge_token: 't'.repeat(43),
  device: 'laptop',
  agent_kinds: ['codex'],
  installations: [{ id: 'b'.repeat(32), kind: 'codex', path: '/usr/bin/codex', source: 'path' }],
  live_sessions: 1,
  max_sessions: 4,
  sent_at: 1_700_000_000_000,
};

describe('heartbeatSchema', () => {
  it('accepts a heartbeat', () => expect(parses(heartbeatSchema, HEARTBEAT)).toBe(true));
  it.each([
    ['an unknown field', { ...HEARTBEAT, extra: 1 }],
    ['edge_id 0', { ...HEARTBEAT, edge_id: '0' }],
    ['a non-canonical edge_id', { ...HEARTBEAT, edge_id: '042' }],
    ['a numeric edge_id', { ...HEARTBEAT, edge_id: 42 }],
    ['an empty token', { ...HEARTBEAT, edge_token: '' }],
    ['a token of 129 characters', { ...HEARTBEAT, edge_token: 't'.repeat(129) }],
    ['a device of 201 characters', { ...HEARTBEAT, device: 'd'.repeat(201) }],
    ['9 agent kinds', { ...HEARTBEAT, agent_kinds: Array.from({ length: 9 }, (_, i) => `k${i}`) }],
    [
      '65 installations',
      { ...HEARTBEAT, installations: Array.from({ length: 65 }, () => HEARTBEAT.installations[0]) },
    ],
    ['an unknown installation field', { ...HEARTBEAT, installations: [{ id: 'x', kind: 'codex', pid: 1 }] }],
    ['negative live sessions', { ...HEARTBEAT, live_sessions: -1 }],
  ])('refuses %s', (_name, body) => {
    expect(parses(heartbeatSchema, body)).toBe(false);
  });
  it('accepts the boundaries', () => {
    expect(
      parses(heartbeatSchema, { ...HEARTBEAT, edge_token: 't'.repeat(128), device: 'd'.repeat(200) }),
    ).toBe(true);
  });
});

const JOURNAL = {
  v: 1,
  session_id: SESSION,
  edge_id: '42',
  actor_id: '7',
  access_id: ACCESS,
  epoch: 'e1',
  revision: 3,
  snapshot: { version: 1, status: 'ok', session_id: SESSION, revision: 3 },
  emitted_at: 1,
  recorded_at: 2,
};

describe('journalEntrySchema', () => {
  it('accepts an entry', () => expect(parses(journalEntrySchema, JOURNAL)).toBe(true));
  it.each([
    ['an unknown field', { ...JOURNAL, extra: 1 }],
    ['version 2', { ...JOURNAL, v: 2 }],
    ['a session id of 65 characters', { ...JOURNAL, session_id: 's'.repeat(65) }],
    ['an actor id of 33 characters', { ...JOURNAL, actor_id: '9'.repeat(33) }],
    ['an empty epoch', { ...JOURNAL, epoch: '' }],
    ['a snapshot without status', { ...JOURNAL, snapshot: { version: 1 } }],
  ])('refuses %s', (_name, body) => {
    expect(parses(journalEntrySchema, body)).toBe(false);
  });
});

const LIFECYCLE = {
  v: 1,
  id: `${SESSION}:e1:5:turn.completed`,
  type: 'turn.completed',
  session_id: SESSION,
  edge_id: '42',
  actor_id: '7',
  at: 2,
  epoch: 'e1',
  sequence: 5,
  data: { status: 'ok', turn_timing: { dispatch_ms: 1, first_reply_ms: null } },
};

describe('lifecycleEventSchema', () => {
  it('accepts an event', () => expect(parses(lifecycleEventSchema, LIFECYCLE)).toBe(true));
  it.each([
    ['an unknown field', { ...LIFECYCLE, extra: 1 }],
    ['an unknown data field (no content may ride along)', { ...LIFECYCLE, data: { title: 't' } }],
    ['version 2', { ...LIFECYCLE, v: 2 }],
    ['an unknown type', { ...LIFECYCLE, type: 'turn.paused' }],
    ['sequence 0', { ...LIFECYCLE, sequence: 0 }],
  ])('refuses %s', (_name, body) => {
    expect(parses(lifecycleEventSchema, body)).toBe(false);
  });
});
