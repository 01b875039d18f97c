// A small HTTP load balancer for rollout tests, behaving as a Kubernetes Service with readiness
// does: it routes only to backends whose /readyz (on their ops port) answered 200 at the last
// probe, round-robin; it retries a request on another backend only when the request is idempotent
// (GET, HEAD, OPTIONS) and the backend refused the connection, so nothing reached it. Anything
// else a backend does (an error status, a dropped response) reaches the client as it happened.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Backend {
  /** `http://127.0.0.1:port` of the public port. */
  url: string;
  /** `http://127.0.0.1:port/readyz` of the ops port. */
  readyUrl: string;
}

/** How often readiness is probed; kubelet probes every few seconds, a rollout test wants it quick. */
const PROBE_INTERVAL_MS = 100;
const PROBE_TIMEOUT_MS = 2_000;
/**
 * Consecutive failed probes before a backend is taken out, as a readiness probe's
 * failureThreshold (the manifests use 2): one slow answer on a loaded machine does not empty the
 * Service. A refused connection takes it out at once.
 */
const FAILURE_THRESHOLD = 2;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface BalancerCounts {
  /** Requests handed to a backend. */
  proxied: number;
  /** Idempotent requests re-sent to another backend after a connect error. */
  retried: number;
  /** Requests answered 502/503 by the balancer itself (no ready backend, or a backend failed). */
  failed: number;
}

export class LoadBalancer {
  readonly counts: BalancerCounts = { proxied: 0, retried: 0, failed: 0 };
  private readonly ready = new Set<Backend>();
  private readonly failedProbes = new Map<Backend, number>();
  private next = 0;
  private server?: Server;
  private timer?: NodeJS.Timeout;
  /** Backends with a probe on its way; each is probed on its own, as kubelet does per pod. */
  private readonly probing = new Set<Backend>();

  constructor(private readonly backends: readonly Backend[]) {}

  get url(): string {
    const address = this.server?.address() as AddressInfo | undefined;
    if (!address) throw new Error('The balancer is not listening.');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Backends the balancer routes to right now. */
  readyBackends(): Backend[] {
    return this.backends.filter((backend) => this.ready.has(backend));
  }

  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /**
   * Probes every backend not already being probed. A backend that is slow to answer (booting, or
   * a loaded machine) must not hold back the probes of the others: a draining one has to be
   * noticed within its shutdown delay whatever its neighbours do.
   */
  private async probe(): Promise<void> {
    await Promise.all(this.backends.filter((b) => !this.probing.has(b)).map((b) => this.probeOne(b)));
  }

  private async probeOne(backend: Backend): Promise<void> {
    this.probing.add(backend);
    let ok = false;
    try {
      const response = await fetch(backend.readyUrl, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await response.arrayBuffer();
      ok = response.status === 200;
    } catch {
      // Refused or timed out: a failed probe.
    } finally {
      this.probing.delete(backend);
    }
    const failed = ok ? 0 : (this.failedProbes.get(backend) ?? 0) + 1;
    this.failedProbes.set(backend, failed);
    if (ok) this.ready.add(backend);
    else if (failed >= FAILURE_THRESHOLD) this.ready.delete(backend);
  }

  private pick(exclude: Set<Backend>): Backend | undefined {
    const candidates = this.readyBackends().filter((backend) => !exclude.has(backend));
    if (candidates.length === 0) return undefined;
    this.next = (this.next + 1) % candidates.length;
    return candidates[this.next];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const tried = new Set<Backend>();
    for (;;) {
      const backend = this.pick(tried);
      if (!backend) {
        this.counts.failed += 1;
        res.writeHead(503, { 'content-type': 'text/plain' }).end('no ready backend');
        return;
      }
      tried.add(backend);
      this.counts.proxied += 1;
      const outcome = await this.forward(backend, req, res, body);
      if (outcome === 'done') return;
      // Nothing reached the backend: a Service would drop the endpoint and try another.
      this.ready.delete(backend);
      if (!IDEMPOTENT.has(req.method ?? '')) {
        this.counts.failed += 1;
        res.writeHead(502, { 'content-type': 'text/plain' }).end('backend refused the connection');
        return;
      }
      this.counts.retried += 1;
    }
  }

  /** Pipes one exchange through; `connect-error` when the backend refused before anything was sent. */
  private forward(
    backend: Backend,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
  ): Promise<'done' | 'connect-error'> {
    return new Promise((resolve) => {
      const target = new URL(req.url ?? '/', backend.url);
      // No keep-alive towards the backends: a reused socket the backend just closed would turn
      // into a failure the balancer cannot tell from a real one.
      const upstream = request(
        target,
        {
          method: req.method,
          headers: { ...req.headers, host: target.host, connection: 'close' },
          agent: false,
        },
        (response: IncomingMessage) => {
          res.writeHead(response.statusCode ?? 502, response.headers);
          response.pipe(res);
          response.on('error', () => res.destroy());
          res.on('close', () => response.destroy());
          resolve('done');
        },
      );
      upstream.on('error', (error: NodeJS.ErrnoException) => {
        if (!res.headersSent && error.code === 'ECONNREFUSED') return resolve('connect-error');
        if (!res.headersSent) {
          this.counts.failed += 1;
          res.writeHead(502, { 'content-type': 'text/plain' }).end('backend failed');
        } else {
          res.destroy();
        }
        resolve('done');
      });
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  }
}
