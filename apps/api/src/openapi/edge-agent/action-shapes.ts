// Which request fields each public action allows and requires: the table the request schemas follow.
import { type EdgeAgentAction } from '#contracts';
import { type Schema } from './json-schema.js';
import type { RequestField } from './request-fields.js';

interface ActionShape {
  summary: string;
  required: readonly RequestField[];
  optional: readonly RequestField[];
  /** Further constraints across fields. */
  extra?: Schema;
}

/** The session actions' common shape: a session, optionally through a saved access. */
const sessionAction = (summary: string, required: RequestField[] = [], optional: RequestField[] = []) => ({
  summary,
  required: ['session_id', ...required] as RequestField[],
  optional: ['access_id', ...optional] as RequestField[],
});
/** The mutation envelope, optional on the six mutating actions (docs/contract.md). */
const ENVELOPE: RequestField[] = ['client_operation_id', 'payload_fingerprint', 'expected_runtime_fence'];
const PROMPT_ENVELOPE: RequestField[] = [...ENVELOPE, 'expected_revision'];
const SEND_ENVELOPE: RequestField[] = [...ENVELOPE, 'retry_unknown'];
const fileAction = (summary: string): ActionShape => ({
  summary,
  required: ['access_id', 'session_id', 'file'],
  optional: [],
});

/** Which fields each public action allows and requires (reference §2.2, validation.ts). */
export const ACTION_SHAPES: { [A in EdgeAgentAction]: ActionShape } = {
  discover: { summary: 'List the agent installations on the edge.', required: [], optional: ['access_id'] },
  directories: {
    summary: 'Browse folders on the edge (never file contents).',
    required: [],
    optional: ['access_id', 'directory'],
  },
  sessions: {
    summary: 'List live sessions overlaid on stored history (listed even when the edge is offline).',
    required: ['access_id'],
    optional: ['history_page'],
  },
  start: {
    summary: 'Start a session of an installation in a project.',
    required: ['installation_id', 'project'],
    optional: ['access_id', 'working_directory'],
  },
  resume: {
    summary: 'Resume a stored session through its saved access.',
    required: ['session_id', 'access_id'],
    optional: [],
  },
  poll: sessionAction('Read the session snapshot now.'),
  watch: sessionAction(
    'Wait for the revision to move past the cursor, then read the snapshot.',
    [],
    ['cursor'],
  ),
  send: {
    summary: 'Send a turn: text and/or attachments, optionally with a skill.',
    required: ['session_id'],
    optional: ['access_id', 'text', 'skill_id', 'attachments', ...SEND_ENVELOPE],
    extra: {
      anyOf: [
        { required: ['text'], properties: { text: { type: 'string', minLength: 1 } } },
        { required: ['attachments'] },
      ],
      dependentRequired: { attachments: ['access_id'] },
    },
  },
  interrupt: sessionAction('Interrupt the running turn.', [], ENVELOPE),
  stop: sessionAction('Stop the session.'),
  models: sessionAction("Fetch the session's model catalog."),
  model: sessionAction("Switch to a model of this session's fetched catalog.", ['model'], ENVELOPE),
  rename: sessionAction('Set the display title (kept by history).', ['title']),
  delete: sessionAction('Delete the session: tombstone first, then stop and delete on the edge.'),
  discard: sessionAction('Close and remove an empty, idle, owned session.'),
  approve: sessionAction(
    'Accept or decline one live command approval.',
    ['approval_id', 'decision'],
    PROMPT_ENVELOPE,
  ),
  permissions: sessionAction('Choose the sandbox of the following turns.', ['permission_mode'], ENVELOPE),
  answer: sessionAction('Answer one live input request.', ['input_id', 'answers'], PROMPT_ENVELOPE),
  transcript: {
    summary: 'Read one archived round before history_before.',
    required: ['session_id', 'access_id', 'history_before'],
    optional: [],
  },
  file_list: fileAction('List session files.'),
  file_begin: fileAction('Begin an upload (files.upload).'),
  file_write: fileAction('Upload one chunk (files.upload).'),
  file_commit: fileAction('Commit an upload (files.upload).'),
  file_cancel: fileAction('Cancel an upload (files.upload).'),
  file_read: fileAction('Read a file in chunks (files.read).'),
};
