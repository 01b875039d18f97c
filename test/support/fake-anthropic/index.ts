// A scripted fake of the Anthropic Messages API (streaming SSE) for driving the real Claude Code
// CLI offline. Claude Code POSTs `{base_url}/v1/messages`; each streaming POST takes the next
// scripted step. The request log keeps shapes and counts only, never prompt or output text.
import type { ServerResponse } from 'node:http';
import {
  defaultReply,
  isObject,
  type Json,
  jsonServer,
  listenScripted,
  openEventStream,
  type PromptSteps,
  type ScriptedModelServer,
  ScriptQueue,
  sse,
  stepForPrompt,
  takeStep,
  YES_NO,
} from '../fake-server.js';

/** The key the CLI must be given; any value works, the fake only checks one is sent. */
export const FAKE_ANTHROPIC_KEY = 'fake-anthropic-key';
/** Text deltas are cut to this size so replies stream in several deltas. */
const TEXT_CHUNK_CHARS = 12;

export interface FakeClaudeQuestion {
  question: string;
  header: string;
  options: { label: string; description: string }[];
}

export type FakeClaudeStep =
  /** An assistant reply streamed in deltas (`chunkChars` per delta, default 12). */
  | { kind: 'text'; text: string; chunkChars?: number }
  /** A `Bash` tool call; Claude Code asks before anything that is not read-only. */
  | { kind: 'shell'; command: string; description?: string }
  /** A `Write` tool call that creates a file. */
  | { kind: 'patch'; path: string; content: string }
  /** An `AskUserQuestion` tool call. */
  | { kind: 'question'; questions: FakeClaudeQuestion[] }
  /** Starts a reply and keeps the stream open until the client goes away (interrupt, kill). */
  | { kind: 'hang'; text?: string };

export interface FakeClaudeRequestLogEntry {
  path: string;
  /** The step served, or `default` when neither the script nor a prompt command chose one. */
  step: FakeClaudeStep['kind'] | 'default' | 'non_streaming';
  model: string | undefined;
  /** User turns in the conversation (messages with text, not only tool results). */
  userMessages: number;
  toolResults: number;
  /** Whether the last user message carried a tool result, and whether it was an error. */
  afterTool: boolean;
  lastToolError?: boolean;
  /** Names of the tools Claude Code offered. */
  tools: string[];
}

/** The Messages API for Claude Code (ANTHROPIC_BASE_URL); each streaming POST takes a step. */
export interface FakeAnthropic extends ScriptedModelServer<FakeClaudeStep, FakeClaudeRequestLogEntry> {
  /** Requests for anything but the Messages API (they get a 404). */
  readonly otherRequests: number;
}

const contentOf = (message: Json): Json[] =>
  Array.isArray(message.content) ? message.content.filter(isObject) : [];

/** The last user message (Claude Code may append a system message after it). */
function lastUser(body: Json): Json | undefined {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  return messages.filter((message) => message.role === 'user').at(-1);
}

/**
 * With nothing scripted, the last prompt may name a step, so a person can drive the demo stack by
 * hand, with the words the Codex fake understands: `run: CMD`, `escalate: CMD` (Claude Code asks
 * before anything that is not read-only), `patch: PATH TEXT` (a Write call), `ask: QUESTION` (an
 * AskUserQuestion with Yes/No). Tool results always get the default text reply.
 */
export function promptStep(body: Json): FakeClaudeStep | undefined {
  const last = lastUser(body);
  if (!last) return undefined;
  for (const part of contentOf(last)) {
    if (part.type !== 'text' || typeof part.text !== 'string') continue;
    const step = stepForPrompt(part.text, PROMPT_STEPS);
    if (step) return step;
  }
  return undefined;
}

const PROMPT_STEPS: PromptSteps<FakeClaudeStep> = {
  run: (command) => ({ kind: 'shell', command }),
  escalate: (command) => ({ kind: 'shell', command, description: 'Run this command?' }),
  patch: (file, content) => ({ kind: 'patch', path: file, content }),
  ask: (question) => ({ kind: 'question', questions: [{ question, header: 'Question', options: YES_NO }] }),
};

function summarize(
  urlPath: string,
  body: Json,
  step: FakeClaudeRequestLogEntry['step'],
): FakeClaudeRequestLogEntry {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  const users = messages.filter((message) => message.role === 'user');
  const results = users.flatMap((message) =>
    contentOf(message).filter((part) => part.type === 'tool_result'),
  );
  const lastResults = contentOf(lastUser(body) ?? {}).filter((part) => part.type === 'tool_result');
  const tools = (Array.isArray(body.tools) ? body.tools.filter(isObject) : []).map((tool) =>
    String(tool.name),
  );
  return {
    path: urlPath,
    step,
    model: typeof body.model === 'string' ? body.model : undefined,
    userMessages: users.filter((message) =>
      typeof message.content === 'string' ? true : contentOf(message).some((part) => part.type === 'text'),
    ).length,
    toolResults: results.length,
    afterTool: lastResults.length > 0,
    ...(lastResults.length > 0 ? { lastToolError: lastResults.at(-1)!.is_error === true } : {}),
    tools,
  };
}

class MessageStream {
  private index = 0;

  constructor(
    private readonly res: ServerResponse,
    readonly id: string,
    model: unknown,
  ) {
    openEventStream(res);
    sse(res, 'message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      },
    });
  }

  text(text: string, chunkChars = TEXT_CHUNK_CHARS, finish = true): void {
    const index = this.index++;
    sse(this.res, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (let at = 0; at < text.length; at += chunkChars) {
      sse(this.res, 'content_block_delta', {
        index,
        delta: { type: 'text_delta', text: text.slice(at, at + chunkChars) },
      });
    }
    if (finish) sse(this.res, 'content_block_stop', { index });
  }

  toolUse(name: string, input: Json): void {
    const index = this.index++;
    sse(this.res, 'content_block_start', {
      index,
      content_block: { type: 'tool_use', id: `toolu_${this.id}_${index}`, name, input: {} },
    });
    sse(this.res, 'content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) },
    });
    sse(this.res, 'content_block_stop', { index });
  }

  complete(stopReason: 'end_turn' | 'tool_use'): void {
    sse(this.res, 'message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 20 },
    });
    sse(this.res, 'message_stop', {});
    this.res.end();
  }
}

function serve(
  res: ServerResponse,
  id: string,
  body: Json,
  step: FakeClaudeStep | undefined,
  afterTool: boolean,
): void {
  const stream = new MessageStream(res, id, body.model);
  if (!step) {
    stream.text(defaultReply(afterTool));
    stream.complete('end_turn');
    return;
  }
  switch (step.kind) {
    case 'text':
      stream.text(step.text, step.chunkChars);
      stream.complete('end_turn');
      return;
    case 'shell':
      stream.toolUse('Bash', { command: step.command, description: step.description ?? 'Run a command' });
      break;
    case 'patch':
      stream.toolUse('Write', { file_path: step.path, content: step.content });
      break;
    case 'question':
      stream.toolUse('AskUserQuestion', {
        questions: step.questions.map((question) => ({ ...question, multiSelect: false })),
      });
      break;
    case 'hang':
      if (step.text) stream.text(step.text, TEXT_CHUNK_CHARS, false);
      return; // Left open: the client ends it by going away.
  }
  stream.complete('tool_use');
}

function json(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Starts the fake on 127.0.0.1 with a free port (or `port` when given). */
export async function startFakeAnthropic(port = 0): Promise<FakeAnthropic> {
  const queue = new ScriptQueue<FakeClaudeStep, FakeClaudeRequestLogEntry>('fake provider');
  let otherRequests = 0;
  let sequence = 0;

  const server = jsonServer((req, res, url, read) => {
    if ('status' in read) {
      const error = { type: 'invalid_request_error', message: 'unreadable body' };
      json(res, read.status, { type: 'error', error });
      return;
    }
    const { body } = read;
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
      json(res, 200, { input_tokens: 100 });
      return;
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/messages' || !req.headers['x-api-key']) {
      otherRequests++;
      json(res, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: 'fake provider: no such route' },
      });
      return;
    }
    const id = `msg_fake_${++sequence}`;
    if (body.stream !== true) {
      // Side requests (titles, summaries) never take a scripted step.
      queue.record(summarize(url.pathname, body, 'non_streaming'));
      json(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [{ type: 'text', text: 'Fake' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      });
      return;
    }
    const { step, entry } = takeStep(queue, url.pathname, body, { promptStep, summarize });
    serve(res, id, body, step, entry.afterTool);
  });
  return listenScripted(
    queue,
    server,
    { port },
    {
      get otherRequests() {
        return otherRequests;
      },
    },
  );
}

/** The environment that points Claude Code at the fake and keeps it offline. */
export function fakeAnthropicEnv(provider: FakeAnthropic): Record<string, string> {
  return { ANTHROPIC_BASE_URL: provider.baseUrl, ANTHROPIC_API_KEY: FAKE_ANTHROPIC_KEY };
}
