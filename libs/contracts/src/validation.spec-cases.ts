// The request tables of the validation specs: the valid request of every action, builders for
// variants of it, and the cases each rule is checked with (data, read top to bottom).
import type { EdgeAgentRequest } from './edge-agent.js';
import { FILE_CHUNK_MAX_BYTES, FILE_SIZE_MAX_BYTES } from './limits.js';

export const EDGE = '42';
export const SESSION = '0123456789abcdef0123456789abcdef';
export const ACCESS = 'a'.repeat(32);
export const INSTALLATION = 'b'.repeat(32);
export const OPAQUE = 'c'.repeat(32);
export const MiB = 1024 * 1024;

/** base64 of `n` zero bytes. */
export function base64Of(n: number): string {
  return Buffer.alloc(n).toString('base64');
}

/** A valid request of each action; every case below changes one thing in one of them. */
export const VALID: Record<string, Omit<EdgeAgentRequest, 'edge_id'>> = {
  discover: { action: 'discover' },
  directories: { action: 'directories', directory: '/home/me', access_id: ACCESS },
  sessions: { action: 'sessions', access_id: ACCESS, history_page: '1' },
  start: {
    action: 'start',
    installation_id: INSTALLATION,
    project: '/home/me/p',
    working_directory: '/home/me/p/sub',
    access_id: ACCESS,
  },
  resume: { action: 'resume', session_id: SESSION, access_id: ACCESS },
  poll: { action: 'poll', session_id: SESSION },
  snapshot: { action: 'snapshot', session_id: SESSION, access_id: ACCESS },
  expire: { action: 'expire', session_id: SESSION },
  watch: { action: 'watch', session_id: SESSION, cursor: '5' },
  send: { action: 'send', session_id: SESSION, access_id: ACCESS, text: 'hello', skill_id: OPAQUE },
  interrupt: { action: 'interrupt', session_id: SESSION },
  stop: { action: 'stop', session_id: SESSION },
  models: { action: 'models', session_id: SESSION },
  model: { action: 'model', session_id: SESSION, model: 'gpt-5' },
  rename: { action: 'rename', session_id: SESSION, title: 'My chat' },
  delete: { action: 'delete', session_id: SESSION },
  discard: { action: 'discard', session_id: SESSION },
  approve: { action: 'approve', session_id: SESSION, approval_id: OPAQUE, decision: 'accept' },
  permissions: { action: 'permissions', session_id: SESSION, permission_mode: 'read-only' },
  answer: {
    action: 'answer',
    session_id: SESSION,
    input_id: OPAQUE,
    answers: [{ question_id: 'q1', answers: ['yes'] }],
  },
  transcript: { action: 'transcript', session_id: SESSION, access_id: ACCESS, history_before: '3' },
  file_list: { action: 'file_list', session_id: SESSION, access_id: ACCESS, file: { path: 'src' } },
  file_begin: {
    action: 'file_begin',
    session_id: SESSION,
    access_id: ACCESS,
    file: { name: 'a.txt', size: 10 },
  },
  file_write: {
    action: 'file_write',
    session_id: SESSION,
    access_id: ACCESS,
    file: { transfer_id: OPAQUE, offset: 0, data: 'aGk=' },
  },
  file_commit: {
    action: 'file_commit',
    session_id: SESSION,
    access_id: ACCESS,
    file: { transfer_id: OPAQUE },
  },
  file_cancel: {
    action: 'file_cancel',
    session_id: SESSION,
    access_id: ACCESS,
    file: { transfer_id: OPAQUE },
  },
  file_read: { action: 'file_read', session_id: SESSION, access_id: ACCESS, file: { path: 'a.txt' } },
};

/** The valid request of `action` with `patch` applied (an `undefined` value removes the field). */
export function req(
  action: string,
  patch: Partial<Record<keyof EdgeAgentRequest, unknown>> = {},
): EdgeAgentRequest {
  const base = VALID[action];
  if (!base) throw new Error(`no valid base for ${action}`);
  const out: Record<string, unknown> = { edge_id: EDGE, ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out as unknown as EdgeAgentRequest;
}

export function file(action: string, op: Record<string, unknown>): EdgeAgentRequest {
  return req(action, { file: op });
}

export type Case = [name: string, request: EdgeAgentRequest, ok: boolean];

export const SESSION_ACTIONS = [
  'poll',
  'snapshot',
  'expire',
  'watch',
  'stop',
  'interrupt',
  'models',
  'model',
  'rename',
  'delete',
  'discard',
  'approve',
  'permissions',
  'answer',
  'transcript',
];
export const FILE_ACTIONS = [
  'file_list',
  'file_begin',
  'file_write',
  'file_commit',
  'file_cancel',
  'file_read',
];

/** The value rules: ids, cursors, pages, titles, models, decisions, answers, attachments, chunks. */
export const VALUE_RULE_CASES: Case[] = [
  ['access_id of 31 characters', req('poll', { access_id: 'a'.repeat(31) }), false],
  ['access_id of 33 characters', req('poll', { access_id: 'a'.repeat(33) }), false],
  ['access_id with a subject wildcard', req('poll', { access_id: 'a'.repeat(31) + '*' }), false],
  ['access_id with - and _', req('poll', { access_id: 'A-_'.repeat(10) + 'zz' }), true],
  ['skill_id of 31 characters', req('send', { skill_id: 'c'.repeat(31) }), false],
  ['skill_id of 33 characters', req('send', { skill_id: 'c'.repeat(33) }), false],

  ['cursor 0', req('watch', { cursor: '0' }), true],
  ['cursor empty', req('watch', { cursor: undefined }), true],
  ['cursor 2^64-1', req('watch', { cursor: '18446744073709551615' }), true],
  ['cursor 2^64', req('watch', { cursor: '18446744073709551616' }), false],
  ['cursor with leading zeros', req('watch', { cursor: '007' }), true],
  ['cursor -1', req('watch', { cursor: '-1' }), false],
  ['cursor +1', req('watch', { cursor: '+1' }), false],
  ['cursor with a space', req('watch', { cursor: ' 1' }), false],
  ['cursor 1e3', req('watch', { cursor: '1e3' }), false],

  ['history_page 1', req('sessions', { history_page: '1' }), true],
  ['history_page 100000', req('sessions', { history_page: '100000' }), true],
  ['history_page 0', req('sessions', { history_page: '0' }), false],
  ['history_page 100001', req('sessions', { history_page: '100001' }), false],
  ['history_page -1', req('sessions', { history_page: '-1' }), false],
  ['history_page not a number', req('sessions', { history_page: 'two' }), false],
  ['history_page empty', req('sessions', { history_page: undefined }), true],

  ['title of 120 runes', req('rename', { title: 't'.repeat(120) }), true],
  ['title of 121 runes', req('rename', { title: 't'.repeat(121) }), false],
  ['title of 120 astral runes (240 code units)', req('rename', { title: '😀'.repeat(120) }), true],
  ['title of 121 astral runes', req('rename', { title: '😀'.repeat(121) }), false],
  ['title blank', req('rename', { title: '  \t ' }), false],
  ['title missing on rename', req('rename', { title: undefined }), false],
  ['title with a C0 control', req('rename', { title: 'a\u0007b' }), false],
  ['title with DEL', req('rename', { title: 'a\u007fb' }), false],
  ['title with a C1 control', req('rename', { title: 'a\u0085b' }), false],
  ['title with a lone surrogate (invalid UTF-8)', req('rename', { title: 'a\ud800b' }), false],

  ['model empty on model', req('model', { model: undefined }), false],
  ['model with a control character', req('model', { model: 'gpt\n5' }), false],

  ['approve decline', req('approve', { decision: 'decline' }), true],
  ['approve acceptForSession', req('approve', { decision: 'acceptForSession' }), false],
  ['approve without decision', req('approve', { decision: undefined }), false],
  ['approve approval_id of 31', req('approve', { approval_id: 'c'.repeat(31) }), false],
  ['approve without approval_id', req('approve', { approval_id: undefined }), false],

  ['permissions workspace-write', req('permissions', { permission_mode: 'workspace-write' }), true],
  ['permissions danger-full-access', req('permissions', { permission_mode: 'danger-full-access' }), false],
  ['permissions without a mode', req('permissions', { permission_mode: undefined }), false],

  ['answer input_id of 33', req('answer', { input_id: 'c'.repeat(33) }), false],
  ['answer without input_id', req('answer', { input_id: undefined }), false],
  ['answer with 0 answers', req('answer', { answers: [] }), false],
  [
    'answer with 3 answers',
    req('answer', {
      answers: [
        { question_id: 'q1', answers: ['a'] },
        { question_id: 'q2', answers: ['b'] },
        { question_id: 'q3', answers: ['c'] },
      ],
    }),
    true,
  ],
  [
    'answer with 4 answers',
    req('answer', {
      answers: ['q1', 'q2', 'q3', 'q4'].map((q) => ({ question_id: q, answers: ['a'] })),
    }),
    false,
  ],
  ['answer question_id empty', req('answer', { answers: [{ question_id: '', answers: ['a'] }] }), false],
  [
    'answer question_id of 128 bytes',
    req('answer', { answers: [{ question_id: 'q'.repeat(128), answers: ['a'] }] }),
    true,
  ],
  [
    'answer question_id of 129 bytes',
    req('answer', { answers: [{ question_id: 'q'.repeat(129), answers: ['a'] }] }),
    false,
  ],
  [
    'answer question_id repeated',
    req('answer', {
      answers: [
        { question_id: 'q1', answers: ['a'] },
        { question_id: 'q1', answers: ['b'] },
      ],
    }),
    false,
  ],
  ['answer with no strings', req('answer', { answers: [{ question_id: 'q1', answers: [] }] }), false],
  [
    'answer with two strings',
    req('answer', { answers: [{ question_id: 'q1', answers: ['a', 'b'] }] }),
    false,
  ],
  ['answer blank', req('answer', { answers: [{ question_id: 'q1', answers: [' \n'] }] }), false],
  [
    'answer of 4096 bytes',
    req('answer', { answers: [{ question_id: 'q1', answers: ['a'.repeat(4096)] }] }),
    true,
  ],
  [
    'answer of 4097 bytes',
    req('answer', { answers: [{ question_id: 'q1', answers: ['a'.repeat(4097)] }] }),
    false,
  ],
  ['answer invalid UTF-8', req('answer', { answers: [{ question_id: 'q1', answers: ['\udc00'] }] }), false],

  ['transcript history_before 1', req('transcript', { history_before: '1' }), true],
  ['transcript history_before 2^63-1', req('transcript', { history_before: '9223372036854775807' }), true],
  ['transcript history_before 2^63', req('transcript', { history_before: '9223372036854775808' }), false],
  ['transcript history_before 0', req('transcript', { history_before: '0' }), false],
  ['transcript history_before -1', req('transcript', { history_before: '-1' }), false],
  ['transcript without history_before', req('transcript', { history_before: undefined }), false],
  ['transcript without access_id', req('transcript', { access_id: undefined }), false],

  ['8 attachments', req('send', { attachments: ['1', '2', '3', '4', '5', '6', '7', '8'] }), true],
  ['9 attachments', req('send', { attachments: ['1', '2', '3', '4', '5', '6', '7', '8', '9'] }), false],
  ['duplicate attachments', req('send', { attachments: ['a', 'a'] }), false],
  ['empty attachment', req('send', { attachments: [''] }), false],
  ['attachment of 4096 bytes', req('send', { attachments: ['a'.repeat(4096)] }), true],
  ['attachment of 4097 bytes', req('send', { attachments: ['a'.repeat(4097)] }), false],
  ['attachment with a control character', req('send', { attachments: ['a\u0000b'] }), false],
  ['attachment with invalid UTF-8', req('send', { attachments: ['a\ud800'] }), false],

  ['file.path of 4096 bytes', file('file_list', { path: 'p'.repeat(4096) }), true],
  ['file.path of 4097 bytes', file('file_list', { path: 'p'.repeat(4097) }), false],
  ['file.path with a control character', file('file_list', { path: 'a\tb' }), false],
  ['file.size of 20 MiB', file('file_begin', { name: 'a', size: 20 * MiB }), true],
  ['file.size of 20 MiB + 1', file('file_begin', { name: 'a', size: 20 * MiB + 1 }), false],
  ['file.size negative', file('file_begin', { name: 'a', size: -1 }), false],
  ['file.size fractional', file('file_begin', { name: 'a', size: 1.5 }), false],
  [
    'file.offset of 20 MiB',
    file('file_write', { transfer_id: OPAQUE, offset: FILE_SIZE_MAX_BYTES, data: 'AA==' }),
    true,
  ],
  [
    'file.offset of 20 MiB + 1',
    file('file_write', { transfer_id: OPAQUE, offset: FILE_SIZE_MAX_BYTES + 1, data: 'AA==' }),
    false,
  ],
  ['file.offset negative', file('file_write', { transfer_id: OPAQUE, offset: -1, data: 'AA==' }), false],
  [
    'file.data of 128 KiB',
    file('file_write', { transfer_id: OPAQUE, data: base64Of(FILE_CHUNK_MAX_BYTES) }),
    true,
  ],
  [
    'file.data of 128 KiB + 1',
    file('file_write', { transfer_id: OPAQUE, data: base64Of(FILE_CHUNK_MAX_BYTES + 1) }),
    false,
  ],
  ['file.data not base64', file('file_write', { transfer_id: OPAQUE, data: 'not base64!' }), false],
];

/** The required shape of every action. */
export const SHAPE_CASES: Case[] = [
  ...['discover', 'directories'].flatMap((action): Case[] => [
    [`${action} with session_id`, req(action, { session_id: SESSION }), false],
    [`${action} with text`, req(action, { text: 'hi' }), false],
    [`${action} with project`, req(action, { project: '/p' }), false],
    [`${action} with installation_id`, req(action, { installation_id: INSTALLATION }), false],
  ]),
  ['sessions without access_id', req('sessions', { access_id: undefined }), false],
  ['sessions with session_id', req('sessions', { session_id: SESSION }), false],
  ['sessions with text', req('sessions', { text: 'hi' }), false],
  ['sessions with project', req('sessions', { project: '/p' }), false],
  ['sessions with installation_id', req('sessions', { installation_id: INSTALLATION }), false],
  ['start without installation_id', req('start', { installation_id: undefined }), false],
  ['start with a 31-character installation_id', req('start', { installation_id: 'b'.repeat(31) }), false],
  ['start without project', req('start', { project: undefined }), false],
  ['start with session_id', req('start', { session_id: SESSION }), false],
  ['start with text', req('start', { text: 'hi' }), false],
  ['start without access (transient preview)', req('start', { access_id: undefined }), true],
  ['resume without session_id', req('resume', { session_id: undefined }), false],
  ['resume without access_id', req('resume', { access_id: undefined }), false],
  ['resume with text', req('resume', { text: 'hi' }), false],
  ['resume with project', req('resume', { project: '/p' }), false],
  ['resume with installation_id', req('resume', { installation_id: INSTALLATION }), false],
  ...SESSION_ACTIONS.flatMap((action): Case[] => [
    [`${action} without session_id`, req(action, { session_id: undefined }), false],
    [`${action} with a 31-character session_id`, req(action, { session_id: SESSION.slice(1) }), false],
    [`${action} with text`, req(action, { text: 'hi' }), false],
    [`${action} with project`, req(action, { project: '/p' }), false],
    [`${action} with installation_id`, req(action, { installation_id: INSTALLATION }), false],
  ]),
  ['send without session_id', req('send', { session_id: undefined }), false],
  ['send without text or attachment', req('send', { text: undefined }), false],
  ['send with only an attachment', req('send', { text: undefined, attachments: ['a'] }), true],
  ['send with project', req('send', { project: '/p' }), false],
  ['send with installation_id', req('send', { installation_id: INSTALLATION }), false],
  ...FILE_ACTIONS.flatMap((action): Case[] => [
    [`${action} without access_id`, req(action, { access_id: undefined }), false],
    [`${action} without session_id`, req(action, { session_id: undefined }), false],
    [`${action} with text`, req(action, { text: 'hi' }), false],
    [`${action} with project`, req(action, { project: '/p' }), false],
    [`${action} with installation_id`, req(action, { installation_id: INSTALLATION }), false],
  ]),
];

/** The file operation each file action takes. */
export const FILE_OP_CASES: Case[] = [
  ['file_list with an empty path (the root)', file('file_list', {}), true],
  ['file_list with name', file('file_list', { path: 'a', name: 'b' }), false],
  ['file_list with transfer_id', file('file_list', { transfer_id: OPAQUE }), false],
  ['file_list with offset', file('file_list', { offset: 1 }), false],
  ['file_list with size', file('file_list', { size: 1 }), false],
  ['file_list with data', file('file_list', { data: 'AA==' }), false],

  ['file_begin of an empty file', file('file_begin', { name: 'empty.txt' }), true],
  ['file_begin name of 180 bytes', file('file_begin', { name: 'n'.repeat(180), size: 1 }), true],
  ['file_begin name of 181 bytes', file('file_begin', { name: 'n'.repeat(181), size: 1 }), false],
  ['file_begin without name', file('file_begin', { size: 1 }), false],
  ['file_begin name .', file('file_begin', { name: '.', size: 1 }), false],
  ['file_begin name ..', file('file_begin', { name: '..', size: 1 }), false],
  ['file_begin name with /', file('file_begin', { name: 'a/b', size: 1 }), false],
  ['file_begin name with \\', file('file_begin', { name: 'a\\b', size: 1 }), false],
  ['file_begin name with :', file('file_begin', { name: 'a:b', size: 1 }), false],
  ['file_begin name with NUL', file('file_begin', { name: 'a\u0000b', size: 1 }), false],
  ['file_begin with path', file('file_begin', { name: 'a', size: 1, path: 'x' }), false],
  ['file_begin with transfer_id', file('file_begin', { name: 'a', size: 1, transfer_id: OPAQUE }), false],
  ['file_begin with data', file('file_begin', { name: 'a', size: 1, data: 'AA==' }), false],
  ['file_begin with offset', file('file_begin', { name: 'a', size: 1, offset: 1 }), false],

  [
    'file_write at an offset',
    file('file_write', { transfer_id: OPAQUE, offset: 131072, data: 'AA==' }),
    true,
  ],
  ['file_write without transfer_id', file('file_write', { data: 'AA==' }), false],
  [
    'file_write with a 31-character transfer_id',
    file('file_write', { transfer_id: 'c'.repeat(31), data: 'AA==' }),
    false,
  ],
  ['file_write without data', file('file_write', { transfer_id: OPAQUE }), false],
  ['file_write with path', file('file_write', { transfer_id: OPAQUE, data: 'AA==', path: 'a' }), false],
  ['file_write with name', file('file_write', { transfer_id: OPAQUE, data: 'AA==', name: 'a' }), false],
  ['file_write with size', file('file_write', { transfer_id: OPAQUE, data: 'AA==', size: 1 }), false],

  ...['file_commit', 'file_cancel'].flatMap((action): Case[] => [
    [`${action} without transfer_id`, file(action, {}), false],
    [`${action} with path`, file(action, { transfer_id: OPAQUE, path: 'a' }), false],
    [`${action} with name`, file(action, { transfer_id: OPAQUE, name: 'a' }), false],
    [`${action} with size`, file(action, { transfer_id: OPAQUE, size: 1 }), false],
    [`${action} with offset`, file(action, { transfer_id: OPAQUE, offset: 1 }), false],
    [`${action} with data`, file(action, { transfer_id: OPAQUE, data: 'AA==' }), false],
  ]),

  ['file_read by transfer with an offset', file('file_read', { transfer_id: OPAQUE, offset: 131072 }), true],
  ['file_read by path with an offset', file('file_read', { path: 'a', offset: 1 }), false],
  ['file_read by path and transfer', file('file_read', { path: 'a', transfer_id: OPAQUE }), false],
  ['file_read with neither path nor transfer', file('file_read', {}), false],
  ['file_read with a 33-character transfer_id', file('file_read', { transfer_id: 'c'.repeat(33) }), false],
  ['file_read with name', file('file_read', { path: 'a', name: 'b' }), false],
  ['file_read with size', file('file_read', { path: 'a', size: 1 }), false],
  ['file_read with data', file('file_read', { transfer_id: OPAQUE, data: 'AA==' }), false],
];
