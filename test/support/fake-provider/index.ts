// A scripted fake of the OpenAI Responses API (streaming SSE) for driving the real Codex CLI
// offline. Codex only ever POSTs `{base_url}/responses`; each POST takes the next scripted step.
// The request log keeps shapes and counts only, never prompt or output text.
import { mkdir, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
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

export const FAKE_MODEL = 'fake-model';
export const FAKE_PROVIDER_ID = 'fake';
/** The provider's `env_key`: its value is sent as the bearer token; allow-list it for launches. */
export const FAKE_API_KEY_ENV = 'TETHER_FAKE_PROVIDER_KEY';
/** Text deltas are cut to this size so replies stream in several deltas. */
const TEXT_CHUNK_CHARS = 12;

export interface FakeQuestion {
  id: string;
  header: string;
  question: string;
  options: { label: string; description: string }[];
}

export type FakeStep =
  /** An assistant reply streamed in deltas. */
  | { kind: 'text'; text: string }
  /** An `exec_command` call; `escalate` asks to run outside the sandbox, which needs an approval. */
  | { kind: 'shell'; command: string; escalate?: boolean; justification?: string }
  /** An `apply_patch` call (freeform tool) with the raw patch text. */
  | { kind: 'patch'; patch: string }
  /** A `request_user_input` call (Codex honours it in Plan collaboration mode only). */
  | { kind: 'question'; questions: FakeQuestion[] }
  /** Starts a reply and keeps the stream open until the client goes away (interrupt, kill). */
  | { kind: 'hang'; text?: string };

export interface FakeRequestLogEntry {
  path: string;
  /** The step served, or `default` when neither the script nor a prompt command chose one. */
  step: FakeStep['kind'] | 'default';
  model: string | undefined;
  inputItems: number;
  userMessages: number;
  toolOutputs: number;
  /** Names of the tools Codex offered. */
  tools: string[];
  /** `Process exited with code N` of the last tool output, when present. */
  lastToolExitCode?: number;
  /** Whether the last input item was a tool result. */
  afterTool: boolean;
}

/** The Responses API for Codex (its `base_url`); each POST /responses takes a step. */
export interface FakeProvider extends ScriptedModelServer<FakeStep, FakeRequestLogEntry> {
  /** CONNECT or absolute-URL requests: outbound traffic Codex tried through the proxy. */
  readonly outboundAttempts: number;
}

/**
 * With nothing scripted, the last prompt may name a step, so a person can drive the demo stack by
 * hand: `run: CMD`, `escalate: CMD` (needs an approval), `patch: PATH TEXT` (adds a file), `ask:
 * QUESTION` (an input request with Yes/No). Tool results always get the default text reply.
 */
export function promptStep(body: Json): FakeStep | undefined {
  const input = Array.isArray(body.input) ? body.input.filter(isObject) : [];
  const last = input.at(-1);
  if (!last || last.type !== 'message' || last.role !== 'user' || !Array.isArray(last.content))
    return undefined;
  const text = last.content
    .filter(isObject)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('')
    .trim();
  return stepForPrompt(text, PROMPT_STEPS);
}

const PROMPT_STEPS: PromptSteps<FakeStep> = {
  run: (command) => ({ kind: 'shell', command }),
  escalate: (command) => ({
    kind: 'shell',
    command,
    escalate: true,
    justification: 'Run this outside the sandbox?',
  }),
  patch: (file, content) => {
    const lines = content.split('\n').map((line) => `+${line}`);
    return {
      kind: 'patch',
      patch: `*** Begin Patch\n*** Add File: ${file}\n${lines.join('\n')}\n*** End Patch\n`,
    };
  },
  ask: (question) => ({
    kind: 'question',
    questions: [{ id: 'answer', header: 'Question', question, options: YES_NO }],
  }),
};

function summarize(urlPath: string, body: Json, step: FakeRequestLogEntry['step']): FakeRequestLogEntry {
  const input = Array.isArray(body.input) ? body.input.filter(isObject) : [];
  const outputs = input.filter(
    (item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output',
  );
  const last = input.at(-1);
  const lastOutput = outputs.at(-1);
  const outputText = lastOutput && typeof lastOutput.output === 'string' ? lastOutput.output : '';
  const exit = /Process exited with code (-?\d+)/.exec(outputText);
  const tools = (Array.isArray(body.tools) ? body.tools.filter(isObject) : []).map((tool) =>
    typeof tool.name === 'string' ? tool.name : String(tool.type),
  );
  return {
    path: urlPath,
    step,
    model: typeof body.model === 'string' ? body.model : undefined,
    inputItems: input.length,
    userMessages: input.filter((item) => item.type === 'message' && item.role === 'user').length,
    toolOutputs: outputs.length,
    tools,
    ...(exit ? { lastToolExitCode: Number(exit[1]) } : {}),
    afterTool: last !== undefined && outputs.includes(last),
  };
}

class ResponseStream {
  private index = 0;
  private readonly output: Json[] = [];
  readonly id: string;

  constructor(
    private readonly res: ServerResponse,
    sequence: number,
    private readonly model: unknown,
  ) {
    this.id = `resp_fake_${sequence}`;
    openEventStream(res);
    sse(res, 'response.created', { response: this.base('in_progress') });
  }

  private base(status: string): Json {
    return { id: this.id, object: 'response', model: this.model, status, output: [] };
  }

  text(text: string, finish = true): void {
    const itemId = `msg_${this.id}_${this.index}`;
    const outputIndex = this.index;
    sse(this.res, 'response.output_item.added', {
      output_index: outputIndex,
      item: { type: 'message', id: itemId, role: 'assistant', status: 'in_progress', content: [] },
    });
    sse(this.res, 'response.content_part.added', {
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (let at = 0; at < text.length; at += TEXT_CHUNK_CHARS) {
      sse(this.res, 'response.output_text.delta', {
        item_id: itemId,
        output_index: outputIndex,
        content_index: 0,
        delta: text.slice(at, at + TEXT_CHUNK_CHARS),
      });
    }
    if (!finish) return;
    sse(this.res, 'response.output_text.done', {
      item_id: itemId,
      output_index: outputIndex,
      content_index: 0,
      text,
    });
    const done = {
      type: 'message',
      id: itemId,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    sse(this.res, 'response.output_item.done', { output_index: outputIndex, item: done });
    this.output.push(done);
    this.index++;
  }

  functionCall(name: string, args: Json): void {
    const callId = `call_${this.id}_${this.index}`;
    const itemId = `fc_${this.id}_${this.index}`;
    const argText = JSON.stringify(args);
    const item = {
      type: 'function_call',
      id: itemId,
      call_id: callId,
      name,
      arguments: '',
      status: 'in_progress',
    };
    sse(this.res, 'response.output_item.added', { output_index: this.index, item });
    sse(this.res, 'response.function_call_arguments.delta', {
      item_id: itemId,
      output_index: this.index,
      delta: argText,
    });
    sse(this.res, 'response.function_call_arguments.done', {
      item_id: itemId,
      output_index: this.index,
      arguments: argText,
    });
    const done = { ...item, arguments: argText, status: 'completed' };
    sse(this.res, 'response.output_item.done', { output_index: this.index, item: done });
    this.output.push(done);
    this.index++;
  }

  customToolCall(name: string, input: string): void {
    const callId = `call_${this.id}_${this.index}`;
    const itemId = `ctc_${this.id}_${this.index}`;
    const item = {
      type: 'custom_tool_call',
      id: itemId,
      call_id: callId,
      name,
      input: '',
      status: 'in_progress',
    };
    sse(this.res, 'response.output_item.added', { output_index: this.index, item });
    sse(this.res, 'response.custom_tool_call_input.delta', {
      item_id: itemId,
      output_index: this.index,
      delta: input,
    });
    sse(this.res, 'response.custom_tool_call_input.done', {
      item_id: itemId,
      output_index: this.index,
      input,
    });
    const done = { ...item, input, status: 'completed' };
    sse(this.res, 'response.output_item.done', { output_index: this.index, item: done });
    this.output.push(done);
    this.index++;
  }

  complete(): void {
    const usage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 120,
    };
    sse(this.res, 'response.completed', {
      response: { ...this.base('completed'), output: this.output, usage },
    });
    this.res.end();
  }
}

function serve(
  res: ServerResponse,
  sequence: number,
  body: Json,
  step: FakeStep | undefined,
  afterTool: boolean,
): void {
  const stream = new ResponseStream(res, sequence, body.model);
  if (!step) {
    stream.text(defaultReply(afterTool));
    stream.complete();
    return;
  }
  switch (step.kind) {
    case 'text':
      stream.text(step.text);
      break;
    case 'shell':
      stream.functionCall('exec_command', {
        cmd: step.command,
        login: false,
        ...(step.escalate
          ? {
              sandbox_permissions: 'require_escalated',
              justification: step.justification ?? 'Run outside the sandbox?',
            }
          : {}),
      });
      break;
    case 'patch':
      stream.customToolCall('apply_patch', step.patch);
      break;
    case 'question':
      stream.functionCall('request_user_input', { questions: step.questions });
      break;
    case 'hang':
      if (step.text) stream.text(step.text, false);
      return; // Left open: the client ends it by going away.
  }
  stream.complete();
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeProvider(): Promise<FakeProvider> {
  const queue = new ScriptQueue<FakeStep, FakeRequestLogEntry>('fake provider');
  let outboundAttempts = 0;
  let sequence = 0;

  const server = jsonServer((req, res, url, read) => {
    if (/^https?:/.test(req.url ?? '')) outboundAttempts++;
    if ('status' in read) {
      res.writeHead(read.status).end();
      return;
    }
    if (req.method !== 'POST' || !url.pathname.endsWith('/responses')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'fake provider: no such route' } }));
      return;
    }
    const { body } = read;
    const { step, entry } = takeStep(queue, url.pathname, body, { promptStep, summarize });
    serve(res, ++sequence, body, step, entry.afterTool);
  });
  server.on('connect', (_req, socket) => {
    outboundAttempts++;
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  return listenScripted(
    queue,
    server,
    { basePath: '/v1' },
    {
      get outboundAttempts() {
        return outboundAttempts;
      },
    },
  );
}

/**
 * Model metadata for `fake-model`. Codex needs a catalog entry to offer the freeform `apply_patch`
 * tool (and to stop warning about unknown models); the fields follow the bundled catalog schema.
 */
export function fakeModelCatalog(): Json {
  const effort = (level: string): Json => ({ effort: level, description: `${level} effort` });
  return {
    models: [
      {
        slug: FAKE_MODEL,
        display_name: 'Fake Model',
        description: 'Scripted local fake provider model',
        prefer_websockets: false,
        support_verbosity: true,
        default_verbosity: 'low',
        apply_patch_tool_type: 'freeform',
        web_search_tool_type: 'text_and_image',
        input_modalities: ['text', 'image'],
        supports_image_detail_original: true,
        truncation_policy: { mode: 'tokens', limit: 10000 },
        supports_parallel_tool_calls: true,
        tool_mode: null,
        multi_agent_version: null,
        multi_agent_reasoning_effort: null,
        use_responses_lite: false,
        supports_reasoning_effort_updates: false,
        include_skills_usage_instructions: true,
        include_apps_usage_instructions: true,
        include_plugin_usage_instructions: true,
        guardian: null,
        node_repl_auto_review_required: false,
        node_repl_disabled: false,
        requires_sandboxed_review: false,
        auto_review_model_override: null,
        model_specialty: null,
        context_window: 272000,
        max_context_window: 272000,
        auto_compact_token_limit: null,
        comp_hash: '1',
        default_reasoning_summary: 'none',
        default_reasoning_level: 'medium',
        supported_reasoning_levels: [effort('low'), effort('medium'), effort('high')],
        shell_type: 'shell_command',
        visibility: 'list',
        minimal_client_version: '0.124.0',
        supported_in_api: true,
        availability_nux: null,
        upgrade: null,
        priority: 1,
        model_messages: null,
        base_instructions: 'You are a scripted test model.',
        experimental_supported_tools: [],
        available_in_plans: [],
        supports_search_tool: false,
        supports_experimental_context: false,
        default_service_tier: null,
        service_tiers: [],
        additional_speed_tiers: [],
        supports_reasoning_summary_parameter: false,
        supports_reasoning_summaries: false,
      },
    ],
  };
}

/**
 * Writes a CODEX_HOME that points Codex at the fake provider, with the offline switches from the
 * reference recipe (no plugin sync, no apps, no analytics, no update check).
 */
export async function prepareCodexHome(codexHome: string, provider: FakeProvider): Promise<void> {
  await mkdir(codexHome, { recursive: true });
  const catalogPath = path.join(codexHome, 'fake-model-catalog.json');
  await writeFile(catalogPath, JSON.stringify(fakeModelCatalog()));
  const toml = [
    `model = "${FAKE_MODEL}"`,
    `model_provider = "${FAKE_PROVIDER_ID}"`,
    'check_for_update_on_startup = false',
    `model_catalog_json = ${JSON.stringify(catalogPath)}`,
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
    `[model_providers.${FAKE_PROVIDER_ID}]`,
    'name = "Fake local provider"',
    `base_url = ${JSON.stringify(provider.baseUrl)}`,
    `env_key = "${FAKE_API_KEY_ENV}"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
  await writeFile(path.join(codexHome, 'config.toml'), toml);
}
