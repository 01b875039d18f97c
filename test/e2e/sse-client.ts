// A minimal Server-Sent Events reader for the e2e suites, on a raw HTTP request so a test can
// stop reading (to play a slow subscriber) and see comment lines (heartbeats). Events are parsed
// only when complete, as a browser's EventSource does.
import { request, type IncomingMessage } from 'node:http';
import { SseParser, type SseEvent } from '../support/sse-parser.js';

export type { SseEvent } from '../support/sse-parser.js';

export class SseClient {
  readonly events: SseEvent[] = [];
  /** Comment lines (`: heartbeat`), without the colon. */
  readonly comments: string[] = [];
  /** HTTP status of the response, once it arrived. */
  status: number | undefined;
  /** Set once the server ended the response (or the connection dropped). */
  ended = false;
  private response: IncomingMessage | undefined;
  private readonly parser = new SseParser(
    (event) => this.events.push(event),
    (comment) => this.comments.push(comment),
  );
  private readonly waiters = new Set<() => void>();

  private constructor() {}

  /** Opens `url` with the bearer `token`; resolves once the response head arrived. */
  static async open(url: string, token: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient();
    await new Promise<void>((resolve, reject) => {
      const req = request(
        url,
        { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } },
        (response) => {
          client.response = response;
          client.status = response.statusCode;
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => client.take(chunk));
          const finish = () => {
            client.ended = true;
            client.notify();
          };
          response.on('end', finish);
          response.on('close', finish);
          response.on('error', finish);
          resolve();
        },
      );
      req.on('error', reject);
      req.end();
    });
    return client;
  }

  /** Stops reading: the server's writes pile up in the socket buffers, then in its own. */
  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  close(): void {
    this.response?.destroy();
  }

  /** Resolves once `check` holds (re-checked on every event or end), or rejects after `timeoutMs`. */
  async until(check: (client: SseClient) => boolean, what: string, timeoutMs: number): Promise<void> {
    if (check(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`Timed out waiting for ${what}; saw ${this.describe()}`));
      }, timeoutMs);
      const waiter = () => {
        if (!check(this)) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        resolve();
      };
      this.waiters.add(waiter);
    });
  }

  types(): string[] {
    return this.events.map((event) => event.type);
  }

  describe(): string {
    return `${this.events.length} events (${this.types().slice(-8).join(', ')}), ${this.comments.length} comments, ended ${this.ended}`;
  }

  private take(chunk: string): void {
    this.parser.push(chunk);
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
