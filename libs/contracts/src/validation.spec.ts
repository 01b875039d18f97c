import type { EdgeAgentAnyAction, EdgeAgentRPCRequest } from './edge-agent.js';
import { base64DecodedLength, validateEdgeAgentRequest, validateRpcEnvelope } from './validation.js';
import {
  SESSION,
  ACCESS,
  OPAQUE,
  VALID,
  req,
  file,
  FILE_ACTIONS,
  VALUE_RULE_CASES,
  SHAPE_CASES,
  FILE_OP_CASES,
  type Case,
} from './validation.spec-cases.js';

function run(cases: Case[]): void {
  it.each(cases)('%s', (_name, request, ok) => {
    const verdict = validateEdgeAgentRequest(request);
    if (ok) expect(verdict).toEqual({ ok: true });
    else {
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(verdict.reason.length).toBeGreaterThan(0);
    }
  });
}

describe('validateEdgeAgentRequest', () => {
  describe('every action has a valid shape', () => {
    run(Object.keys(VALID).map((action): Case => [action, req(action), true]));
  });

  describe('edge_id and action', () => {
    run([
      ['edge_id 0 is refused', req('poll', { edge_id: '0' }), false],
      ['empty edge_id is refused', req('poll', { edge_id: '' }), false],
      ['edge_id with leading zeros is not canonical', req('poll', { edge_id: '042' }), false],
      ['edge_id 2^64-1 is accepted', req('poll', { edge_id: '18446744073709551615' }), true],
      ['edge_id 2^64 is refused', req('poll', { edge_id: '18446744073709551616' }), false],
      ['unknown action is refused', req('poll', { action: 'exec' }), false],
      ['empty action is refused', req('poll', { action: '' }), false],
    ]);
  });

  describe('size limits', () => {
    run([
      ['text at 16384 bytes', req('send', { text: 'x'.repeat(16384) }), true],
      ['text at 16385 bytes', req('send', { text: 'x'.repeat(16385) }), false],
      ['text of 16384 bytes in 2-byte characters', req('send', { text: 'é'.repeat(8192) }), true],
      ['text one byte over in 2-byte characters', req('send', { text: 'é'.repeat(8192) + 'x' }), false],
      ['project at 4096 bytes', req('start', { project: '/' + 'p'.repeat(4095) }), true],
      ['project at 4097 bytes', req('start', { project: '/' + 'p'.repeat(4096) }), false],
      ['directory at 4096 bytes', req('directories', { directory: '/' + 'd'.repeat(4095) }), true],
      ['directory at 4097 bytes', req('directories', { directory: '/' + 'd'.repeat(4096) }), false],
      ['working_directory at 4096 bytes', req('start', { working_directory: '/' + 'w'.repeat(4095) }), true],
      ['working_directory at 4097 bytes', req('start', { working_directory: '/' + 'w'.repeat(4096) }), false],
      ['model at 128 bytes', req('model', { model: 'm'.repeat(128) }), true],
      ['model at 129 bytes', req('model', { model: 'm'.repeat(129) }), false],
    ]);
    // installation_id and session_id are only ever valid at 32 characters, so the size limit and
    // the shape rule both refuse; the reason says which one did.
    it.each([
      ['installation_id', 'start', 64, /installation_id must|requires a 32-character installation_id/],
      ['installation_id', 'start', 65, /installation_id exceeds 64/],
      ['session_id', 'poll', 64, /requires a 32-character session_id/],
      ['session_id', 'poll', 65, /session_id exceeds 64/],
    ])('%s of %s at %i characters', (field, action, length, reason) => {
      const verdict = validateEdgeAgentRequest(req(action, { [field]: 'i'.repeat(length) }));
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(verdict.reason).toMatch(reason);
    });
  });
});

describe('validateEdgeAgentRequest', () => {
  describe('fields that must be empty unless the action matches', () => {
    run([
      ['cursor outside watch', req('poll', { cursor: '1' }), false],
      ['model outside model', req('poll', { model: 'gpt-5' }), false],
      ['title outside rename', req('poll', { title: 'x' }), false],
      ['directory outside directories', req('discover', { directory: '/home/me' }), false],
      ['working_directory outside start', req('resume', { working_directory: '/home/me' }), false],
      ['history_page outside sessions', req('poll', { history_page: '1' }), false],
      ['history_before outside transcript', req('poll', { history_before: '1' }), false],
      ['approval_id outside approve', req('poll', { approval_id: OPAQUE }), false],
      ['decision outside approve', req('poll', { decision: 'accept' }), false],
      ['permission_mode outside permissions', req('poll', { permission_mode: 'read-only' }), false],
      ['input_id outside answer', req('poll', { input_id: OPAQUE }), false],
      ['answers outside answer', req('poll', { answers: [{ question_id: 'q', answers: ['a'] }] }), false],
      ['empty answers outside answer', req('poll', { answers: [] }), true],
      ['skill_id outside send', req('poll', { skill_id: OPAQUE }), false],
      [
        'attachments outside send',
        req('poll', { access_id: ACCESS, attachments: ['.liaison-attachments/x'] }),
        false,
      ],
      [
        'attachments on send without access',
        req('send', { access_id: undefined, skill_id: undefined, attachments: ['a'] }),
        false,
      ],
      ['file outside file actions', req('poll', { file: { path: 'a' } }), false],
      ['empty file object outside file actions', req('poll', { file: {} }), false],
      ...FILE_ACTIONS.map((action): Case => [
        `${action} without file`,
        req(action, { file: undefined }),
        false,
      ]),
    ]);
  });

  describe('value rules', () => {
    run(VALUE_RULE_CASES);
  });

  describe('required shape per action', () => {
    run(SHAPE_CASES);
  });

  describe('file op shape per action', () => {
    run(FILE_OP_CASES);
  });

  it('never echoes client content in its reason', () => {
    const secret = 'SECRET-VALUE';
    const verdicts = [
      req('rename', { title: secret + '\u0000' }),
      req('watch', { cursor: secret }),
      req('permissions', { permission_mode: secret }),
      req('approve', { decision: secret }),
      req('poll', { action: secret }),
      file('file_begin', { name: secret + '/' }),
    ].map(validateEdgeAgentRequest);
    for (const verdict of verdicts) {
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(verdict.reason).not.toContain(secret);
    }
  });
});

describe('validateRpcEnvelope', () => {
  function rpc(
    patch: Partial<EdgeAgentRPCRequest> = {},
    action: EdgeAgentAnyAction = 'poll',
  ): EdgeAgentRPCRequest {
    return { version: 1, actor_id: '7', request: req(action), ...patch };
  }
  const resume = { session_id: SESSION, revision: 3 };
  const cases: Array<[string, EdgeAgentRPCRequest, boolean]> = [
    ['a plain poll', rpc(), true],
    ['version 0', rpc({ version: 0 }), false],
    ['version 2', rpc({ version: 2 }), false],
    ['empty actor_id', rpc({ actor_id: '' }), false],
    ['actor_id of 32 characters', rpc({ actor_id: '9'.repeat(32) }), true],
    ['actor_id of 33 characters', rpc({ actor_id: '9'.repeat(33) }), false],
    ['reset_revision on send', rpc({ reset_revision: 4 }, 'send'), true],
    ['reset_revision on poll', rpc({ reset_revision: 4 }), false],
    ['reset_revision 0 on poll', rpc({ reset_revision: 0 }), true],
    ['an invalid request', rpc({ request: req('poll', { session_id: undefined }) }), false],
    ['internal snapshot action', rpc({}, 'snapshot'), true],
    ['internal expire action', rpc({}, 'expire'), true],
    ['resume with its state', rpc({ resume }, 'resume'), true],
    ['resume without its state', rpc({}, 'resume'), false],
    ['state on a non-resume action', rpc({ resume }), false],
    ['project_root of 4096 bytes', rpc({ project_root: 'p'.repeat(4096) }), true],
    ['project_root of 4097 bytes', rpc({ project_root: 'p'.repeat(4097) }), false],
  ];
  it.each(cases)('%s', (_name, envelope, ok) => {
    expect(validateRpcEnvelope(envelope).ok).toBe(ok);
  });
});

describe('base64DecodedLength', () => {
  it.each([
    ['', 0],
    ['AA==', 1],
    ['AAA=', 2],
    ['AAAA', 3],
    ['AA', 1],
    ['AAA', 2],
    ['aGVsbG8gd29ybGQ=', 11],
    ['A', -1],
    ['A===', -1],
    ['AAAA=', -1],
    ['AA=A', -1],
    ['AA-_', -1],
    ['AA AA', -1],
  ])('%j decodes to %i bytes', (input, length) => {
    expect(base64DecodedLength(input)).toBe(length);
  });
});
