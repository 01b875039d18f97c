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
  /** From now on /readyz answers 503 (`draining`): the process is shutting down. */
  drain(): void;
  close(): Promise<void>;
}

/** `/metrics`, `/healthz` and `/readyz` as one plain handler. */
export async function opsResponse(
  path: string,
  checks: Record<string, ReadinessCheck>,
  draining = false,
): Promise<{ status: number; type: string; body: string } | null> {
  switch (path) {
    case '/metrics':
      return { status: 200, type: METRICS_CONTENT_TYPE, body: await renderMetrics() };
    case '/healthz':
      return { status: 200, type: 'application/json', body: '{"status":"ok"}' };
    case '/readyz': {
      // Shutting down: not ready whatever the dependencies say, so no new work is routed here.
      if (draining) {
        return { status: 503, type: 'application/json', body: '{"ready":false,"draining":true,"checks":{}}' };
      }
      const report = await readiness(checks);
      return { status: report.ready ? 200 : 503, type: 'application/json', body: JSON.stringify(report) };
    }
    default:
      return null;
  }
}

/**
 * The small HTTP server every service (the edge only when asked) serves its ops endpoints on,
 * `TETHER_METRICS_PORT`. Only GET, only those three paths; nothing else is exposed.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const wanted = options.port;
  if (wanted === 'off') return { url: null, drain: () => undefined, close: () => Promise.resolve() };
  let draining = false;
  const log = new Logger('Telemetry');
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    opsResponse(path, options.checks, draining).then(
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
    drain: () => {
      draining = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
