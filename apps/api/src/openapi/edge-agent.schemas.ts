// JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the edge_agent contract, generated from the
// contract's constants (actions, statuses, modes, limits) so a bound changes in one place. The
// rules themselves are code in libs/contracts/src/validation.ts; ACTION_SHAPES restates which
// fields each action takes, and the openapi integration test checks every example against the
// contract's decoder and rules so the two cannot drift apart unnoticed.
import {
  APPROVAL_DECISIONS,
  DISPATCH_STATES,
  EDGE_AGENT_ACTIONS,
  EDGE_AGENT_STATUSES,
  Limits,
  OPERATION_REFUSAL_CODES,
  PERMISSION_MODES,
  type EdgeAgentAction,
  type EdgeAgentRequest,
  type FileAction,
} from '#contracts';

/** A JSON Schema object; the document is plain data. */
export type Schema = { [keyword: string]: unknown };

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** C0, DEL and C1 control characters, as the contract's hasControlChars refuses them. */
const CONTROL = '\\u0000-\\u001F\\u007F-\\u009F';
const NO_CONTROL = `^[^${CONTROL}]*$`;
/** No control characters and at least one non-whitespace character (not blank after trim()). */
const NON_BLANK_LINE = `^[^${CONTROL}]*[^\\s${CONTROL}][^${CONTROL}]*$`;
/** The alphabet of ids Tether mints (contract isOpaqueId): subject- and key-safe. */
const OPAQUE_ID = `^[0-9A-Za-z_-]{${Limits.OPAQUE_ID_LENGTH}}$`;
/** Standard base64, padding optional (contract base64DecodedLength). */
const BASE64 = '^[A-Za-z0-9+/]*={0,2}$';
const BASE64_CHUNK_MAX_CHARS = Math.ceil(Limits.FILE_CHUNK_MAX_BYTES / 3) * 4;
/** Decimal digits of the largest history page, to bound the pattern. */
const HISTORY_PAGE_DIGITS = String(Limits.HISTORY_PAGE_MAX).length;
/** 2^63 − 1 has 19 digits. */
const INT63_DIGITS = 19;

/**
 * A string bounded in UTF-8 bytes. JSON Schema counts characters, which never exceed the bytes,
 * so `maxLength` is a sound first bound and `x-max-bytes` states the real one.
 */
function boundedBytes(max: number, description: string, extra: Schema = {}): Schema {
  return {
    type: 'string',
    maxLength: max,
    'x-max-bytes': max,
    description: `${description} At most ${max} UTF-8 bytes.`,
    ...extra,
  };
}

function opaqueId(description: string): Schema {
  return {
    type: 'string',
    minLength: Limits.OPAQUE_ID_LENGTH,
    maxLength: Limits.OPAQUE_ID_LENGTH,
    pattern: OPAQUE_ID,
    description: `${description} Exactly ${Limits.OPAQUE_ID_LENGTH} characters of [0-9A-Za-z_-].`,
  };
}

const fileOffset = (description: string): Schema => ({
  type: 'integer',
  minimum: 0,
  maximum: Limits.FILE_SIZE_MAX_BYTES,
  description,
});

// ---------------------------------------------------------------------------------------------
// Request fields.

type RequestField = Exclude<keyof EdgeAgentRequest, 'edge_id' | 'action'>;

const FILE_PATH = boundedBytes(
  Limits.FILE_PATH_MAX_BYTES,
  'Session-relative path; no control characters, never escapes the project.',
  { pattern: NO_CONTROL },
);
const FILE_TRANSFER_ID = opaqueId('Transfer id from file_begin or a chunked file_read.');

/** Schema of every optional request field, with its reference §2.2 bound. */
const FIELD_SCHEMAS: { [F in Exclude<RequestField, 'file'>]: Schema } = {
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
const FILE_SHAPES: { [A in FileAction]: Schema } = {
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

const SAMPLE = {
  edge: '1001',
  access: '3f2a9c6b8d1e4f7a0b5c2d9e8f1a6b3c',
  installation: '9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e',
  session: '7c1e5a9b2d4f6e8a0c3b5d7f9e1a2c4b',
  approval: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
  input: '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
  transfer: '5d4c3b2a19f8e7d6c5b4a39281706f5e',
};
const inSession = { session_id: SAMPLE.session, access_id: SAMPLE.access };

/** One valid request per action; the integration test runs each through the contract's rules. */
export const ACTION_EXAMPLES: { [A in EdgeAgentAction]: Omit<EdgeAgentRequest, 'edge_id' | 'action'> } = {
  discover: {},
  directories: { directory: '/home/alice' },
  sessions: { access_id: SAMPLE.access, history_page: '1' },
  start: { installation_id: SAMPLE.installation, project: '/home/alice/project', access_id: SAMPLE.access },
  resume: inSession,
  poll: inSession,
  watch: { ...inSession, cursor: '3' },
  send: { ...inSession, text: 'Summarise the README.' },
  interrupt: inSession,
  stop: inSession,
  models: inSession,
  model: { ...inSession, model: 'gpt-5-codex' },
  rename: { ...inSession, title: 'README summary' },
  delete: inSession,
  discard: inSession,
  approve: { ...inSession, approval_id: SAMPLE.approval, decision: 'accept' },
  permissions: { ...inSession, permission_mode: 'workspace-write' },
  answer: { ...inSession, input_id: SAMPLE.input, answers: [{ question_id: 'q1', answers: ['yes'] }] },
  transcript: { ...inSession, history_before: '42' },
  file_list: { ...inSession, file: { path: 'src' } },
  file_begin: { ...inSession, file: { name: 'notes.txt', size: 12 } },
  file_write: { ...inSession, file: { transfer_id: SAMPLE.transfer, offset: 0, data: 'aGVsbG8gd29ybGQh' } },
  file_commit: { ...inSession, file: { transfer_id: SAMPLE.transfer } },
  file_cancel: { ...inSession, file: { transfer_id: SAMPLE.transfer } },
  file_read: { ...inSession, file: { path: 'README.md' } },
};

export const actionSchemaName = (action: EdgeAgentAction): string => `EdgeAgentRequest_${action}`;

export function actionExample(action: EdgeAgentAction): EdgeAgentRequest {
  return { edge_id: SAMPLE.edge, action, ...ACTION_EXAMPLES[action] };
}

const EDGE_ID: Schema = {
  description: `Connector id (uint64): a decimal string of at most ${Limits.EDGE_ID_MAX_DIGITS} significant digits or a safe integer; never 0.`,
  anyOf: [
    { type: 'string', pattern: `^0*[1-9][0-9]{0,${Limits.EDGE_ID_MAX_DIGITS - 1}}$` },
    { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  ],
};

function actionSchema(action: EdgeAgentAction): Schema {
  const shape = ACTION_SHAPES[action];
  const properties: Schema = { edge_id: EDGE_ID, action: { type: 'string', const: action } };
  for (const field of [...shape.required, ...shape.optional]) {
    properties[field] =
      field === 'file' ? (FILE_SHAPES as Record<string, Schema>)[action] : FIELD_SCHEMAS[field];
  }
  return {
    type: 'object',
    title: action,
    description: shape.summary,
    additionalProperties: false,
    required: ['edge_id', 'action', ...shape.required],
    properties,
    ...shape.extra,
    examples: [actionExample(action)],
  };
}

/** `EdgeAgentRequest` (the union) and one member per action. */
export function requestSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = {};
  const mapping: Record<string, string> = {};
  for (const action of EDGE_AGENT_ACTIONS) {
    schemas[actionSchemaName(action)] = actionSchema(action);
    mapping[action] = `#/components/schemas/${actionSchemaName(action)}`;
  }
  return {
    EdgeAgentRequest: {
      description:
        'Body of POST /api/v1/edge-agents: one member per action, keyed by `action`. Unknown fields are refused at every level; ' +
        'as in proto3 JSON an empty string or list counts as absent, and fields another action takes must be absent. ' +
        'The actor is always taken from the token, never from the body.',
      oneOf: EDGE_AGENT_ACTIONS.map((action) => ref(actionSchemaName(action))),
      discriminator: { propertyName: 'action', mapping },
    },
    ...schemas,
  };
}

// ---------------------------------------------------------------------------------------------
// Results. Decoded tolerantly (clients ignore unknown fields), so no additionalProperties here.

const str = (description?: string): Schema => ({ type: 'string', ...(description ? { description } : {}) });
const bool = (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) });
const int = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) });
const nullableInt = (description: string): Schema => ({ type: ['integer', 'null'], description });
const list = (items: Schema, description?: string): Schema => ({
  type: 'array',
  items,
  ...(description ? { description } : {}),
});
const object = (properties: Schema, required: string[] = [], description?: string): Schema => ({
  type: 'object',
  ...(description ? { description } : {}),
  ...(required.length > 0 ? { required } : {}),
  properties,
});

export function resultSchemas(): Record<string, Schema> {
  return {
    EdgeAgentStatus: {
      type: 'string',
      enum: [...EDGE_AGENT_STATUSES],
      description:
        'Edge-level outcome, always with HTTP 200. Any other value from an edge becomes `unavailable`; ' +
        '`resume_unavailable` is emitted although the proto comment omits it; `output_limit` is accepted but never emitted.',
    },
    EdgeAgentResult: object(
      {
        version: int('Contract version, 1.'),
        status: ref('EdgeAgentStatus'),
        installations: list(ref('Installation')),
        default_project: str(),
        session_id: str(),
        running: bool(),
        closed: bool(),
        messages: list(ref('Message'), `Display window: at most ${Limits.MESSAGES_MAX} messages.`),
        truncated: bool(),
        thread_id: str(),
        model: str(),
        project: str(),
        started_at: str(),
        skills: list(ref('Skill')),
        skills_available: bool(),
        agent_version: str(),
        revision: int('Snapshot revision; watch with it as the cursor.'),
        activities: list(ref('Activity'), `At most ${Limits.ACTIVITIES_MAX} activities.`),
        directory: str(),
        parent_directory: str(),
        directories: list(ref('Directory')),
        directory_roots: list(str()),
        sessions: list(ref('SessionSummary'), 'sessions action, scoped to actor and access.'),
        sessions_available: bool(),
        models: list(ref('AgentModel')),
        models_available: bool(),
        title: str(),
        session_management: bool('rename/delete supported; delete requires a closed session.'),
        history_persistent: bool('Server owns durable history, no automatic expiration.'),
        archived: bool('Read-only saved snapshot; not a native execution checkpoint.'),
        history_total: int(),
        approvals: list(ref('Approval'), 'Live only, never persisted in history.'),
        permissions_available: bool(),
        permission_mode: str(),
        input_requests: list(ref('InputRequest'), 'Live only; removed from persisted snapshots.'),
        window: int(),
        history_windowing: bool(),
        files_available: bool(),
        files: list(ref('AgentFile')),
        file: ref('AgentFile'),
        transfer_id: str(),
        file_data: { type: 'string', contentEncoding: 'base64', description: 'Chunk bytes in base64.' },
        file_offset: int(),
        file_done: bool(),
        files_upload_available: bool(),
        turn_timing: ref('AgentTurnTiming'),
        request_service_ms: nullableInt(
          'send only: milliseconds the api spent on this request, before JSON encoding.',
        ),
        operation: ref('OperationOutcome'),
      },
      ['version', 'status'],
      'Result of every action; empty fields are omitted and a missing boolean means false.',
    ),
    OperationOutcome: object(
      {
        client_operation_id: str(),
        replayed: bool('True when the recorded outcome was returned instead of a new effect.'),
        fence: int('The session runtime fence when the reply was made.'),
        submission: ref('Submission'),
        resolution: ref('PromptResolution'),
        refusal: ref('OperationRefusal'),
      },
      ['client_operation_id', 'replayed', 'fence'],
      'Only in replies to requests that carried the mutation envelope (docs/contract.md "Idempotent mutations"). ' +
        'A refused operation answers a contract `status` and names the reason in `refusal.code`.',
    ),
    Submission: object(
      {
        client_message_id: str("The send's client_operation_id."),
        fence: int(),
        payload_fingerprint: str(),
        dispatch_state: {
          type: 'string',
          enum: [...DISPATCH_STATES],
          description:
            '`unknown`: the dispatch timed out or threw after it may have been delivered; never re-sent for the user.',
        },
        reason: str('rejected: the status the edge answered; unknown: why delivery is unconfirmed.'),
        item_id: str('accepted: the journal item of the sent message, when it could be named.'),
        submitted_at: int(),
        resolved_at: int(),
      },
      ['client_message_id', 'fence', 'payload_fingerprint', 'dispatch_state', 'submitted_at'],
      'send: the write-ahead submission at its current state.',
    ),
    PromptResolution: object(
      {
        resolved: bool(),
        selected_option_id: {
          type: ['string', 'null'],
          description: 'approve: the decision; answer: the canonical JSON of the answers.',
        },
        resolved_by: { type: ['string', 'null'] },
        resolved_at: { type: ['integer', 'null'] },
      },
      ['resolved', 'selected_option_id', 'resolved_by', 'resolved_at'],
    ),
    OperationRefusal: object(
      {
        code: { type: 'string', enum: [...OPERATION_REFUSAL_CODES] },
        message: str(),
        current_fence: int('checkpoint_stale: the session runtime fence.'),
        current_revision: int('item_revision_stale, already_resolved: the prompt revision.'),
        resolution: ref('PromptResolution'),
      },
      ['code', 'message'],
    ),
    Installation: object({ id: str(), kind: str(), path: str(), source: str() }, ['id', 'kind']),
    Message: object({ role: str(), text: str(), attachments: list(ref('AgentFile')) }, ['role']),
    AgentFile: object({ name: str(), path: str(), size: int(), directory: bool(), media_type: str() }),
    Skill: object({ id: str(), name: str(), description: str() }, ['id']),
    Activity: object(
      {
        id: str(),
        kind: str(),
        status: str(),
        message_index: int(),
        duration_ms: int(),
        command: str(),
        directory: str(),
        output: str(),
        exit_code: nullableInt('Exit code of the command, when it finished.'),
        changes: list(ref('FileChange')),
        truncated: bool(),
      },
      ['id', 'kind'],
      'Bounded owner-only command output and file changes; never raw RPC or reasoning.',
    ),
    FileChange: object({ path: str(), kind: str(), diff: str(), move_path: str() }),
    Directory: object({ name: str(), path: str() }, ['name', 'path']),
    SessionSummary: object(
      {
        session_id: str(),
        thread_id: str(),
        title: str(),
        project: str(),
        updated_at: str(),
        running: bool(),
        closed: bool(),
        status: str(),
      },
      ['session_id'],
    ),
    AgentModel: object({ id: str(), name: str() }, ['id']),
    Approval: object(
      {
        id: str(),
        command: str(),
        directory: str(),
        reason: str(),
        kind: str(),
        changes: list(ref('FileChange')),
      },
      ['id'],
    ),
    InputOption: object({ label: str(), description: str() }, ['label']),
    InputQuestion: object(
      {
        id: str(),
        header: str(),
        question: str(),
        is_other: bool(),
        is_secret: bool(),
        options: list(ref('InputOption')),
      },
      ['id'],
    ),
    InputRequest: object({ id: str(), questions: list(ref('InputQuestion')), blocking: bool() }, ['id']),
    AgentTurnTiming: object(
      {
        dispatch_ms: nullableInt('Native send/control round trip from the edge.'),
        first_reply_ms: nullableInt('Turn start to the first non-empty assistant text.'),
        finished_ms: nullableInt('Whole turn, tools and approval waits included.'),
      },
      [],
      'Edge-local durations of the last turn; missing means not observed, 0 is a real value.',
    ),
  };
}
