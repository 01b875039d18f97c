import { AsyncLocalStorage } from 'node:async_hooks';
import { context, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { recordHttpRequest, recordRequestService } from './metrics.js';
import { opsResponse } from './ops-server.js';
import type { ReadinessCheck } from './health.js';

/** The span attribute naming the contract action of an HTTP call (`send`, `poll`, ...). */
export const ACTION_ATTR = 'tether.action';

/** Per HTTP request: when it arrived and which action it turned out to be. */
interface RequestNote {
  start: number;
  action?: string;
}
const notes = new AsyncLocalStorage<RequestNote>();

/** The parts of a Fastify instance used here (structural, so telemetry does not import Fastify). */
interface HookRequest {
  method: string;
  routeOptions: { url?: string };
}
interface HookReply {
  statusCode: number;
}
export interface FastifyLike {
  addHook(
    name: 'onRequest',
    hook: (request: HookRequest, reply: HookReply, done: () => void) => void,
  ): unknown;
  addHook(
    name: 'onResponse',
    hook: (request: HookRequest, reply: HookReply, done: () => void) => void,
  ): unknown;
  get(path: string, handler: (request: unknown, reply: FastifyReplyLike) => Promise<unknown>): unknown;
}
export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: string): unknown;
}

/**
 * The api's HTTP metric (duration by action and status) and its ops routes (`/metrics`,
 * `/healthz`, `/readyz` on the api's own port). The action is the contract's `action` for
 * `POST /api/v1/edge-agents` (noted by the controller with `noteHttpAction`), the route pattern
 * otherwise; unmatched paths are `unmatched`, so the label set stays small.
 */
export function instrumentApiHttp(fastify: FastifyLike, checks: Record<string, ReadinessCheck>): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    notes.enterWith({ start: performance.now() });
    nameHttpRoute(request.routeOptions.url);
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const note = notes.getStore();
    if (note) {
      const route = request.routeOptions.url;
      if (route !== '/metrics' && route !== '/healthz' && route !== '/readyz') {
        recordHttpRequest(
          performance.now() - note.start,
          note.action ?? route ?? 'unmatched',
          reply.statusCode,
          request.method,
        );
      }
    }
    done();
  });
  for (const path of ['/metrics', '/healthz', '/readyz']) {
    fastify.get(path, async (_request, reply) => {
      const answer = await opsResponse(path, checks);
      if (!answer) return reply.code(404).send('');
      return reply.code(answer.status).header('content-type', answer.type).send(answer.body);
    });
  }
}

/**
 * Gives the route pattern to the HTTP instrumentation's server span and duration metric
 * (`http.route`, span name `POST /api/v1/edge-agents`). This is the one thing a Fastify
 * instrumentation would add; its per-hook spans (about nine per request) are left out, so a
 * request is one span.
 */
function nameHttpRoute(route: string | undefined): void {
  if (!route) return;
  const metadata = getRPCMetadata(context.active());
  if (metadata?.type === RPCType.HTTP) metadata.route = route;
}

/** Names the action of the current HTTP call, for the duration metric and the trace. */
export function noteHttpAction(action: string): void {
  const note = notes.getStore();
  if (note) note.action = action;
  trace.getActiveSpan()?.setAttribute(ACTION_ATTR, action);
}

/** Records a send's `request_service_ms` on the current span and in its histogram. */
export function noteRequestService(ms: number): void {
  trace.getActiveSpan()?.setAttribute('tether.request_service_ms', ms);
  recordRequestService(ms);
}
