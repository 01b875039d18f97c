// The schema of each edge_agent request field and file operation, with its reference §2.2 bound.
import {
  APPROVAL_DECISIONS,
  Limits,
  PERMISSION_MODES,
  type EdgeAgentRequest,
  type FileAction,
} from '#contracts';
import {
  boundedBytes,
  opaqueId,
  fileOffset,
  type Schema,
  CONTROL,
  NO_CONTROL,
  NON_BLANK_LINE,
  BASE64,
  BASE64_CHUNK_MAX_CHARS,
  HISTORY_PAGE_DIGITS,
  INT63_DIGITS,
} from './json-schema.js';

export type RequestField = Exclude<keyof EdgeAgentRequest, 'edge_id' | 'action'>;

const FILE_PATH = boundedBytes(
  Limits.FILE_PATH_MAX_BYTES,
  'Session-relative path; no control characters, never escapes the project.',
  { pattern: NO_CONTROL },
);
const FILE_TRANSFER_ID = opaqueId('Transfer id from file_begin or a chunked file_read.');

/** Schema of every optional request field, with its reference §2.2 bound. */
export const FIELD_SCHEMAS: { [F in Exclude<RequestField, 'file'>]: Schema } = {
  installation_id: opaqueId('Agent installation discovered on the edge (discover).'),
  project: boundedBytes(Limits.PROJECT_MAX_BYTES, 'Project directory on the edge.', { minLength: 1 }),
  session_id: opaqueId('Live or archived session id.'),
  text: boundedBytes(Limits.TEXT_MAX_BYTES, 'Prompt text of the turn.'),
  skill_id: opaqueId('Opaque skill id discovered by this owned session, never a client path.'),
  access_id: opaqueId('Saved AgentAccess id; checked against the caller on every request.'),
  directory: boundedBytes(Limits.DIRECTORY_MAX_BYTES, 'Directory to browse (folders only, never contents).'),
  working_directory: boundedBytes(
    Limits.DIRECTORY_MAX_BYTES,
    'Optional session-only working directory; the default stays unchanged.',
  ),
  cursor: {
    type: 'string',
    pattern: '^[0-9]+$',
    description: `Last observed revision, a decimal uint64. The watch waits at most ${Limits.WATCH_WAIT_MS / 1000} s for it to move.`,
  },
  model: boundedBytes(Limits.MODEL_MAX_BYTES, "A model id from this session's fetched catalog (models).", {
    minLength: 1,
    pattern: NO_CONTROL,
  }),
  title: {
    type: 'string',
    minLength: 1,
    maxLength: Limits.TITLE_MAX_RUNES,
    pattern: NON_BLANK_LINE,
    description: `Session display name: at most ${Limits.TITLE_MAX_RUNES} characters, not blank, no control characters.`,
  },
  history_page: {
    type: 'string',
    pattern: `^0*[1-9][0-9]{0,${HISTORY_PAGE_DIGITS - 1}}$`,
    description: `Server history page (${Limits.SESSIONS_PAGE_SIZE} records per page), decimal 1 to ${Limits.HISTORY_PAGE_MAX}.`,
  },
  approval_id: opaqueId('Live approval request id.'),
  decision: {
    type: 'string',
    enum: [...APPROVAL_DECISIONS],
    description: 'Accept or decline this one request.',
  },
  permission_mode: {
    type: 'string',
    enum: [...PERMISSION_MODES],
    description: 'Sandbox of the following turns (default read-only).',
  },
  input_id: opaqueId('Live input request id (not a native RPC id).'),
  answers: {
    type: 'array',
    minItems: Limits.ANSWERS_MIN,
    maxItems: Limits.ANSWERS_MAX,
    description: 'One answer per question; question ids unique.',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['question_id', 'answers'],
      properties: {
        question_id: boundedBytes(Limits.QUESTION_ID_MAX_BYTES, 'Question id of the input request.', {
          minLength: 1,
        }),
        answers: {
          type: 'array',
          minItems: 1,
          maxItems: 1,
          description: 'Exactly one answer.',
          items: boundedBytes(Limits.ANSWER_MAX_BYTES, 'The answer; not blank.', {
            minLength: 1,
            pattern: '\\S',
          }),
        },
      },
    },
  },
  history_before: {
    type: 'string',
    pattern: `^0*[1-9][0-9]{0,${INT63_DIGITS - 1}}$`,
    description: 'Exclusive window cursor: a positive integer below 2^63; one archived round per page.',
  },
  attachments: {
    type: 'array',
    minItems: 1,
    maxItems: Limits.ATTACHMENTS_MAX,
    uniqueItems: true,
    description: 'Session-local relative paths of uploaded files (saved access only).',
    items: boundedBytes(Limits.ATTACHMENT_PATH_MAX_BYTES, 'Attachment path; no control characters.', {
      minLength: 1,
      pattern: NO_CONTROL,
    }),
  },
  client_operation_id: {
    type: 'string',
    minLength: 1,
    maxLength: Limits.CLIENT_OPERATION_ID_MAX_LENGTH,
    description:
      'Mutation envelope (docs/contract.md): `<13-digit ms timestamp>-<32 lowercase hex>`. The same id with the same fingerprint has one effect, however often it is retried; sent with payload_fingerprint.',
  },
  payload_fingerprint: {
    type: 'string',
    pattern: '^[0-9a-f]{64}$',
    description:
      'sha256 hex of the canonical JSON of {method, sessionId, fields} (docs/contract.md); recomputed and compared before anything else.',
  },
  expected_runtime_fence: {
    type: 'integer',
    minimum: 1,
    description:
      'The runtime fence the client last saw; a different one is refused (agent_session_checkpoint_stale).',
  },
  expected_revision: {
    type: 'integer',
    minimum: 1,
    description: 'approve, answer: the prompt revision answered (1 while pending); compare-and-set.',
  },
  retry_unknown: {
    type: 'boolean',
    description:
      'send with the envelope: dispatch again a send whose submission is `unknown` (nothing else is re-run). A control flag, outside the fingerprint.',
  },
};

const FILE_NAME: Schema = boundedBytes(
  Limits.FILE_NAME_MAX_BYTES,
  'Name of the uploaded file: no / \\ : or control characters, not . or .. (uploads never overwrite).',
  { minLength: 1, pattern: `^[^/\\\\:${CONTROL}]+$`, not: { enum: ['.', '..'] } },
);

function fileOperation(description: string, properties: Schema, required: string[] = []): Schema {
  return {
    type: 'object',
    description,
    additionalProperties: false,
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
}

/** The `file` operation each file action takes (reference §2.2 "File op shape per action"). */
export const FILE_SHAPES: { [A in FileAction]: Schema } = {
  file_list: fileOperation('List one directory of the session.', { path: FILE_PATH }),
  file_begin: fileOperation(
    'Start an upload under .liaison-attachments/.',
    { name: FILE_NAME, size: fileOffset('Declared size in bytes.') },
    ['name'],
  ),
  file_write: fileOperation(
    'Write one chunk of an upload.',
    {
      transfer_id: FILE_TRANSFER_ID,
      offset: fileOffset('Byte offset of this chunk.'),
      data: {
        type: 'string',
        minLength: 1,
        maxLength: BASE64_CHUNK_MAX_CHARS,
        pattern: BASE64,
        contentEncoding: 'base64',
        description: `Chunk bytes in base64, at most ${Limits.FILE_CHUNK_MAX_BYTES} bytes decoded.`,
      },
    },
    ['transfer_id', 'data'],
  ),
  file_commit: fileOperation('Finish an upload.', { transfer_id: FILE_TRANSFER_ID }, ['transfer_id']),
  file_cancel: fileOperation('Abandon an upload.', { transfer_id: FILE_TRANSFER_ID }, ['transfer_id']),
  file_read: {
    description: 'Read a file: open it by path, then fetch further chunks by transfer_id and offset.',
    oneOf: [
      fileOperation(
        'Open by path.',
        { path: { ...FILE_PATH, minLength: 1 }, offset: { const: 0, description: 'Always 0 by path.' } },
        ['path'],
      ),
      fileOperation(
        'Next chunk of an open read.',
        { transfer_id: FILE_TRANSFER_ID, offset: fileOffset('Byte offset to read from.') },
        ['transfer_id'],
      ),
    ],
  },
};
