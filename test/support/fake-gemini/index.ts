// A scripted fake of the Gemini API (generativelanguage v1beta) for driving the real Gemini CLI
// offline. With the model pinned, the CLI only POSTs `models/{model}:streamGenerateContent?alt=sse`;
// JSON-mode helper calls (`:generateContent` with a schema) get schema-valid JSON. Each chat POST
// takes the next scripted step, or the step the prompt names (`run:`, `escalate:`, `patch:`,
// `slow:`), as the Codex fake does. The request log keeps shapes and counts only, never text.
import { mkdir, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import {
  isObject,
  type Json,
  jsonServer,
  listenScripted,
  type ScriptedModelServer,
  ScriptQueue,
} from '../fake-server.js';

export const FAKE_GEMINI_MODEL = 'gemini-2.5-flash';
export const FAKE_GEMINI_KEY = 'fake-gemini-key';
const TEXT_CHUNK_CHARS = 12;
const SLOW_CHUNK_MS = 200;
const SLOW_CHUNKS = 100;
/** Text chunks of an ordinary reply are this far apart, so a watcher sees the reply grow. */
const TEXT_CHUNK_MS = 15;

export type GeminiStep =
  /** A reply in 12-character chunks, `delayMs` apart (default TEXT_CHUNK_MS). */
  | { kind: 'text'; text: string; delayMs?: number }
  /** A thought part, then text. */
  | { kind: 'think'; text: string; delayMs?: number }
  /** `run_shell_command`: Gemini CLI asks for a permission before running it. */
  | { kind: 'shell'; command: string }
  /** `write_file`: a file change that needs a permission. */
  | { kind: 'write'; file: string; content: string }
  /** Many small text chunks, SLOW_CHUNK_MS apart (interrupt tests). */
  | { kind: 'slow' };

export interface GeminiRequestLogEntry {
  /** The model named in the request path. */
  model: string;
  step: GeminiStep['kind'] | 'default' | 'json';
  contents: number;
  userTexts: number;
  afterTool: boolean;
}

export interface FakeGemini extends ScriptedModelServer<GeminiStep, GeminiRequestLogEntry> {
  /** Any path but the two model calls: the CLI tried to reach something else. */
  readonly unknownRequests: number;
}

function lastParts(body: Json): Json[] {
  const contents = Array.isArray(body.contents) ? body.contents.filter(isObject) : [];
  const last = contents.at(-1);
  return last && Array.isArray(last.parts) ? last.parts.filter(isObject) : [];
}

/** The step a prompt names, for driving the demo stack by hand. `ask:` has no Gemini equivalent. */
export function promptStep(body: Json): GeminiStep | undefined {
  const texts = lastParts(body)
    .map((part) => part.text)
    .filter((text): text is string => typeof text === 'string');
  const text = (texts.at(-1) ?? '').trim();
  const command = /^(run|escalate|patch|slow|think):\s*([\s\S]*)$/.exec(text);
  if (!command) return undefined;
  const [, verb, rest] = command as unknown as [string, string, string];
  switch (verb) {
    case 'run':
    case 'escalate':
      return { kind: 'shell', command: rest };
    case 'patch': {
      const [file, ...words] = rest.split(/\s+/);
      return {
        kind: 'write',
        file: file ?? 'patched.txt',
        content: `${words.join(' ') || 'created by the fake'}\n`,
      };
    }
    case 'think':
      return { kind: 'think', text: 'Thought about it.' };
    default:
      return { kind: 'slow' };
  }
}

const chunk = (parts: Json[], finish?: boolean): Json => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...(finish ? { finishReason: 'STOP' } : {}) }],
  ...(finish
    ? { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } }
    : {}),
});

function textChunks(text: string): Json[] {
  const out: Json[] = [];
  for (let at = 0; at < text.length; at += TEXT_CHUNK_CHARS)
    out.push(chunk([{ text: text.slice(at, at + TEXT_CHUNK_CHARS) }]));
  out.push(chunk([{ text: '' }], true));
  return out;
}

function stepChunks(step: GeminiStep | undefined, afterTool: boolean): { chunks: Json[]; delayMs: number } {
  if (!step)
    return {
      chunks: textChunks(afterTool ? 'The tool finished.' : 'Hello from the fake Gemini.'),
      delayMs: 0,
    };
  switch (step.kind) {
    case 'text':
      return { chunks: textChunks(step.text), delayMs: step.delayMs ?? TEXT_CHUNK_MS };
    case 'think':
      return {
        chunks: [chunk([{ text: '**Pondering**', thought: true }]), ...textChunks(step.text)],
        delayMs: step.delayMs ?? TEXT_CHUNK_MS,
      };
    case 'shell':
      return {
        chunks: [
          chunk(
            [
              {
                functionCall: {
                  name: 'run_shell_command',
                  args: { command: step.command, description: 'scripted' },
                },
              },
            ],
            true,
          ),
        ],
        delayMs: 0,
      };
    case 'write':
      return {
        chunks: [
          chunk(
            [{ functionCall: { name: 'write_file', args: { file_path: step.file, content: step.content } } }],
            true,
          ),
        ],
        delayMs: 0,
      };
    case 'slow': {
      const chunks = Array.from({ length: SLOW_CHUNKS }, (_, i) => chunk([{ text: `chunk ${i}. ` }]));
      return { chunks: [...chunks, chunk([{ text: 'done.' }], true)], delayMs: SLOW_CHUNK_MS };
    }
  }
}

/** JSON-mode helper calls (routing, next speaker, loop checks) get values that satisfy their schema. */
function jsonAnswer(body: Json): string {
  const config = isObject(body.generationConfig) ? body.generationConfig : {};
  const schema = isObject(config.responseJsonSchema)
    ? config.responseJsonSchema
    : isObject(config.responseSchema)
      ? config.responseSchema
      : {};
  const props = isObject(schema.properties) ? schema.properties : {};
  const out: Json = {};
  for (const [key, value] of Object.entries(props)) {
    const type = isObject(value) ? String(value.type).toLowerCase() : '';
    if (isObject(value) && Array.isArray(value.enum)) out[key] = value.enum[0];
    else if (type === 'boolean') out[key] = false;
    else if (type === 'number' || type === 'integer') out[key] = 1;
    else if (type === 'array') out[key] = [];
    else out[key] = 'fake';
  }
  if ('next_speaker' in props) out.next_speaker = 'user';
  return JSON.stringify(out);
}

async function stream(res: ServerResponse, chunks: Json[], delayMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let closed = false;
  res.on('close', () => (closed = true));
  for (const item of chunks) {
    if (closed) return;
    res.write(`data: ${JSON.stringify(item)}\r\n\r\n`);
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  res.end();
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeGemini(): Promise<FakeGemini> {
  const queue = new ScriptQueue<GeminiStep, GeminiRequestLogEntry>('fake gemini');
  let unknownRequests = 0;

  const server = jsonServer(async (req, res, url, read) => {
    if ('status' in read) {
      res.writeHead(read.status).end();
      return;
    }
    const { body } = read;
    const config = isObject(body.generationConfig) ? body.generationConfig : {};
    const json = config.responseMimeType === 'application/json';
    const chat = req.method === 'POST' && url.pathname.endsWith(':streamGenerateContent');
    if (req.method === 'POST' && json && (chat || url.pathname.endsWith(':generateContent'))) {
      const answer = chunk([{ text: jsonAnswer(body) }], true);
      if (chat) await stream(res, [answer], 0);
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      return;
    }
    if (!chat) {
      unknownRequests++;
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { code: 404, message: 'fake gemini: no such route', status: 'NOT_FOUND' },
        }),
      );
      return;
    }
    const afterTool = lastParts(body).some((part) => part.functionResponse !== undefined);
    const step = afterTool ? undefined : (queue.next() ?? promptStep(body));
    const contents = Array.isArray(body.contents) ? body.contents.filter(isObject) : [];
    queue.record({
      model: decodeURIComponent(/\/models\/([^:/]+):/.exec(url.pathname)?.[1] ?? ''),
      step: step?.kind ?? 'default',
      contents: contents.length,
      userTexts: contents.filter(
        (entry) =>
          entry.role === 'user' &&
          Array.isArray(entry.parts) &&
          entry.parts.some((p) => isObject(p) && typeof p.text === 'string'),
      ).length,
      afterTool,
    });
    const { chunks, delayMs } = stepChunks(step, afterTool);
    await stream(res, chunks, delayMs);
  });
  return listenScripted(
    queue,
    server,
    {},
    {
      get unknownRequests() {
        return unknownRequests;
      },
    },
  );
}

/** The environment that points Gemini CLI at the fake (allow-listed by the ACP driver). */
export function fakeGeminiEnv(fake: FakeGemini): Record<string, string> {
  return { GEMINI_API_KEY: FAKE_GEMINI_KEY, GOOGLE_GEMINI_BASE_URL: fake.baseUrl };
}

/** Pins the model in an agent home, so the CLI makes no routing call per prompt. */
export async function pinFakeGeminiModel(geminiHome: string): Promise<void> {
  await mkdir(path.join(geminiHome, '.gemini'), { recursive: true });
  await writeFile(
    path.join(geminiHome, '.gemini', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'gemini-api-key' } },
      model: { name: FAKE_GEMINI_MODEL },
    }),
  );
}

/** The npm entry point of the Gemini CLI this repository installs. */
export function geminiEntryPoint(repoRoot: string): string {
  return path.join(repoRoot, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');
}
