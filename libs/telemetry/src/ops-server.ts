import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Logger } from '@nestjs/common';
import { readiness, type ReadinessCheck } from './health.js';
import { METRICS_CONTENT_TYPE, renderMetrics } from './reader.js';
import type { MetricsPort } from './config.js';

export interface OpsServerOptions {
  /** For the ready line: `history`, `session-router`, `edge-connector`. */
  service: string;
  port: MetricsPort;
  /** Scrapers reach it from outside the host or container. */
  host?: string;
  checks: Record<string, ReadinessCheck>;
}

export interface OpsServer {
  /** `http://host:port`, or null when the server is off. */
  readonly url: string | null;
  close(): Promise<void>;
}

/** `/metrics`, `/healthz` and `/readyz` as one plain handler (the api mounts the same three on Fastify). */
export async function opsResponse(
  path: string,
  checks: Record<string, ReadinessCheck>,
): Promise<{ status: number; type: string; body: string } | null> {
  switch (path) {
    case '/metrics':
      return { status: 200, type: METRICS_CONTENT_TYPE, body: await renderMetrics() };
    case '/healthz':
      return { status: 200, type: 'application/json', body: '{"status":"ok"}' };
    case '/readyz': {
      const report = await readiness(checks);
      return { status: report.ready ? 200 : 503, type: 'application/json', body: JSON.stringify(report) };
    }
    default:
      return null;
  }
}

/**
 * The small HTTP server a NATS service (and, when asked, the edge) serves its ops endpoints on,
 * `TETHER_METRICS_PORT`. Only GET, only those three paths; nothing else is exposed.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const wanted = options.port;
  if (wanted === 'off') return { url: null, close: async () => undefined };
  const log = new Logger('Telemetry');
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    opsResponse(path, options.checks).then(
      (answer) => {
        if (!answer) return void response.writeHead(404).end();
        response.writeHead(answer.status, { 'content-type': answer.type, 'cache-control': 'no-store' });
        response.end(answer.body);
      },
      (error: unknown) => {
        log.error(`Ops endpoint ${path} failed: ${(error as Error).message}`);
        response.writeHead(500).end();
      },
    );
  });
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  log.log(`Ops endpoints of ${options.service} at ${url} (/metrics, /healthz, /readyz).`);
  return {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
