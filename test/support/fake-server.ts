// The plumbing the scripted model servers share (fake-provider, fake-anthropic, fake-gemini):
// listening on loopback, waiting for a number of requests, stopping with every connection, the
// JSON and SSE helpers, and the prompt commands a person types to drive the demo stack by hand.
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 (`port` 0: any free one); resolves with the bound port. */
export async function listenLocal(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * Resolves once `requests` holds `count` entries; `waiters` is the set the server calls after
 * recording each request. Rejects after `timeoutMs`, naming `who` and the count seen.
 */
export function waitForCount(
  requests: { length: number },
  waiters: Set<() => void>,
  count: number,
  timeoutMs: number,
  who: string,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (requests.length < count) return;
      clearTimeout(timer);
      waiters.delete(check);
      resolve();
    };
    const timer = setTimeout(() => {
      waiters.delete(check);
      reject(new Error(`${who} saw ${requests.length} of ${count} requests`));
    }, timeoutMs);
    waiters.add(check);
    check();
  });
}

/** Stops the server, cutting the connections still open (a hung stream, a keep-alive). */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export type Json = Record<string, unknown>;
export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Opens a streamed reply the way the Anthropic and OpenAI APIs do (kept alive until it ends). */
export function openEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** The reply of the Anthropic and OpenAI fakes when neither the script nor the prompt chose a step. */
export const defaultReply = (afterTool: boolean): string =>
  afterTool ? 'The tool finished.' : 'Hello from the fake provider.';

/** One server-sent event whose data repeats its type (both model APIs stream this way). */
export function sse(res: ServerResponse, type: string, payload: Json): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`);
}

/** `run: CMD`, `escalate: CMD`, `patch: PATH TEXT` or `ask: QUESTION`, as typed in a prompt. */
export interface PromptCommand {
  verb: 'run' | 'escalate' | 'patch' | 'ask';
  rest: string;
}

export function promptCommand(text: string): PromptCommand | undefined {
  const command = /^(run|escalate|patch|ask):\s*([\s\S]+)$/.exec(text.trim());
  if (!command) return undefined;
  return { verb: command[1] as PromptCommand['verb'], rest: command[2]! };
}

/** A `patch:` command's file and content (the default content when none was typed). */
export function patchOf(rest: string): { file: string; content: string } {
  const [file, ...words] = rest.split(/\s+/);
  return { file: file ?? 'file.txt', content: words.join(' ') || 'created by the fake provider' };
}

/** How one fake turns each prompt command into a step of its own API. */
export interface PromptSteps<Step> {
  run(command: string): Step;
  escalate(command: string): Step;
  patch(file: string, content: string): Step;
  ask(question: string): Step;
}

/** The step `text` names as a prompt command (see PromptCommand), or undefined when it names none. */
export function stepForPrompt<Step>(text: string, steps: PromptSteps<Step>): Step | undefined {
  const command = promptCommand(text);
  if (!command) return undefined;
  if (command.verb !== 'patch') return steps[command.verb](command.rest);
  const { file, content } = patchOf(command.rest);
  return steps.patch(file, content);
}

/** The answers an `ask:` command offers. */
export const YES_NO = [
  { label: 'Yes', description: 'Agree' },
  { label: 'No', description: 'Disagree' },
];

/** The most a scripted server reads of one request body (a long conversation is a few MiB). */
const BODY_MAX_BYTES = 8 * 1024 * 1024;

/** The request's body as text; rejects (and drops the request) past BODY_MAX_BYTES. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_MAX_BYTES) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** What every scripted model server offers the suite that drives it. */
export interface ScriptedModelServer<Step, Logged> {
  readonly port: number;
  /** The base URL the agent's CLI is pointed at. */
  readonly baseUrl: string;
  /** Queues steps; each model request consumes one. */
  script(...steps: Step[]): void;
  /** Steps not consumed yet. */
  readonly remaining: number;
  /** Requests as shapes and counts only, never prompt or output text. */
  readonly requests: readonly Logged[];
  /** Resolves once `count` requests arrived (bounded by timeoutMs). */
  waitForRequests(count: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A request body parsed as a JSON object (`{}` for any other JSON value or an empty body), or
 * the status the fake answers instead: 413 past BODY_MAX_BYTES, 400 when it is not JSON.
 */
export async function readJsonObject(req: IncomingMessage): Promise<{ body: Json } | { status: 413 | 400 }> {
  let raw: string;
  try {
    raw = await readBody(req);
  } catch {
    return { status: 413 };
  }
  try {
    const parsed: unknown = JSON.parse(raw || '{}');
    return { body: isObject(parsed) ? parsed : {} };
  } catch {
    return { status: 400 };
  }
}

/** A scripted server's queue of steps and its log of requests. */
export class ScriptQueue<Step, Logged> {
  readonly requests: Logged[] = [];
  private readonly steps: Step[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(private readonly who: string) {}

  script(...steps: Step[]): void {
    this.steps.push(...steps);
  }

  /** Steps not consumed yet. */
  get remaining(): number {
    return this.steps.length;
  }

  next(): Step | undefined {
    return this.steps.shift();
  }

  /** Logs a request and wakes whoever waits for a count. */
  record(entry: Logged): void {
    this.requests.push(entry);
    for (const wake of this.waiters) wake();
  }

  waitFor(count: number, timeoutMs: number): Promise<void> {
    return waitForCount(this.requests, this.waiters, count, timeoutMs, this.who);
  }
}

/** How a fake picks a model request's step when nothing is scripted, and logs the request. */
export interface StepChooser<Step extends { kind: string }, Logged> {
  promptStep(body: Json): Step | undefined;
  summarize(urlPath: string, body: Json, step: Step['kind'] | 'default'): Logged;
}

/**
 * The step a model request takes, the next scripted one or else the one its prompt names, and its
 * log entry, recorded before the step is served.
 */
export function takeStep<Step extends { kind: string }, Logged>(
  queue: ScriptQueue<Step, Logged>,
  urlPath: string,
  body: Json,
  chooser: StepChooser<Step, Logged>,
): { step: Step | undefined; entry: Logged } {
  const step = queue.next() ?? chooser.promptStep(body);
  const entry = chooser.summarize(urlPath, body, step?.kind ?? 'default');
  queue.record(entry);
  return { step, entry };
}

/** What a scripted server's handler is given: the request's URL and its body (or the refusal). */
export type JsonHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  read: { body: Json } | { status: 413 | 400 },
) => Promise<void> | void;

/** An HTTP server that reads each request's body as JSON (readJsonObject) before `handle` runs. */
export function jsonServer(handle: JsonHandler): Server {
  return http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      await handle(req, res, url, await readJsonObject(req));
    })();
  });
}

/**
 * Listens on 127.0.0.1 (`port` 0: any free one) and returns the ScriptedModelServer the queue
 * and server make, its base URL ending in `basePath`, with `extra`'s members (its getters stay
 * live: they are copied as properties, not read once).
 */
export async function listenScripted<Step, Logged, Extra extends object>(
  queue: ScriptQueue<Step, Logged>,
  server: Server,
  where: { port?: number; basePath?: string },
  extra: Extra,
): Promise<ScriptedModelServer<Step, Logged> & Extra> {
  const port = await listenLocal(server, where.port);
  const base = {
    port,
    baseUrl: `http://127.0.0.1:${port}${where.basePath ?? ''}`,
    script: (...steps: Step[]) => queue.script(...steps),
    get remaining() {
      return queue.remaining;
    },
    requests: queue.requests,
    waitForRequests: (count: number, timeoutMs: number) => queue.waitFor(count, timeoutMs),
    stop: () => closeServer(server),
  };
  return Object.defineProperties(base, Object.getOwnPropertyDescriptors(extra)) as typeof base & Extra;
}
