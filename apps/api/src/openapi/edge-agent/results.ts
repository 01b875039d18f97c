// `EdgeAgentResult` and its parts: decoded tolerantly by clients, so no additionalProperties.
import { DISPATCH_STATES, EDGE_AGENT_STATUSES, Limits, OPERATION_REFUSAL_CODES } from '#contracts';
import { ref, type Schema } from './json-schema.js';

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
  return { ...resultSchema(), ...operationSchemas(), ...partSchemas() };
}

/** The status and the result itself. */
function resultSchema(): Record<string, Schema> {
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
  };
}

/** What an enveloped mutation answers: its outcome, submission, resolution or refusal. */
function operationSchemas(): Record<string, Schema> {
  return {
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
  };
}

/** The parts a result lists: installations, messages, activities, sessions, prompts, timing. */
function partSchemas(): Record<string, Schema> {
  return {
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
