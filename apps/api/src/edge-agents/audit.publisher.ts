import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import {
  AUDIT_ID_MAX_LENGTH,
  AUDIT_UNDECODED_ACTION,
  AUDITED_ACTIONS,
  EDGE_AGENT_ACTIONS,
  isStorableId,
  Limits,
  type AuditRecord,
  type AuditedAction,
  type EdgeAgentRequest,
} from '#contracts';
import { AUDIT_STREAM_DEFAULTS } from '#config';
import { encodeJson, ensureAuditStream, withSendSpan, NatsBus } from '#messaging';
import { API_CONFIG } from '../common/tokens.js';
import type { ApiConfig } from '../config.js';

const AUDITED: ReadonlySet<string> = new Set(AUDITED_ACTIONS);
const CLIENT_ACTIONS: ReadonlySet<string> = new Set(EDGE_AGENT_ACTIONS);
/** Outcomes that count as success in the reference's audit (§2.1 "Management audit"). */
const SUCCESS_STATUSES = new Set(['ok', 'session_closed']);
/** W3C traceparent: version-traceid-parentid-flags; an all-zero trace id is invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;
/** The JetStream store ack; the caller never waits for it. */
const AUDIT_PUBLISH_TIMEOUT_MS = Limits.HISTORY_RPC_TIMEOUT_MS;

export function traceIdOf(traceparent: string | undefined): string | undefined {
  const match = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  const traceId = match?.[1];
  return traceId && !/^0+$/.test(traceId) ? traceId : undefined;
}

export function isAudited(action: string): action is AuditedAction {
  return AUDITED.has(action);
}

/** Builds a record of ids and outcome only: never text, title, path, file data or tokens. */
export function auditRecord(
  actorId: string,
  request: EdgeAgentRequest & { action: AuditedAction },
  status: string,
  traceparent: string | undefined,
  now = Date.now(),
): AuditRecord {
  const record: AuditRecord = {
    v: 1,
    id: randomBytes(16).toString('hex'),
    actor_id: actorId,
    action: request.action,
    edge_id: request.edge_id,
    status,
    success: SUCCESS_STATUSES.has(status),
    occurred_at: now,
  };
  if (request.access_id) record.access_id = request.access_id;
  if (request.session_id) record.session_id = request.session_id;
  const traceId = traceIdOf(traceparent);
  if (traceId) record.trace_id = traceId;
  return record;
}

/** An id of a refused call's body as it was sent, when it can be stored; else undefined. */
function decodedId(value: unknown): string | undefined {
  const id = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof id === 'string' && isStorableId(id, AUDIT_ID_MAX_LENGTH) ? id : undefined;
}

/**
 * The record of a refused call, with what its body let us decode (`body` is the parsed JSON, or
 * undefined when it was not JSON): the action when it names a known one, and each id exactly as
 * sent when it is storable, valid or not (`"0"`, `"null"`, 33 characters). Never anything else
 * of the body.
 */
export function refusedAuditRecord(
  actorId: string,
  body: unknown,
  status: string,
  traceparent: string | undefined,
  now = Date.now(),
): AuditRecord {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const action =
    typeof fields['action'] === 'string' && CLIENT_ACTIONS.has(fields['action'])
      ? fields['action']
      : AUDIT_UNDECODED_ACTION;
  const record: AuditRecord = {
    v: 1,
    id: randomBytes(16).toString('hex'),
    actor_id: actorId,
    action,
    edge_id: decodedId(fields['edge_id']) ?? '',
    status,
    success: false,
    occurred_at: now,
  };
  const accessId = decodedId(fields['access_id']);
  if (accessId) record.access_id = accessId;
  const sessionId = decodedId(fields['session_id']);
  if (sessionId) record.session_id = sessionId;
  const traceId = traceIdOf(traceparent);
  if (traceId) record.trace_id = traceId;
  return record;
}

/**
 * Publishes one audit record per mutating edge_agent call to JetStream, where history's durable
 * consumer stores it. Fire and forget: the caller's reply never waits for or fails on it; a record
 * JetStream did not accept is logged (by id and action only).
 */
@Injectable()
export class AuditPublisher implements OnApplicationBootstrap {
  private readonly log = new Logger(AuditPublisher.name);
  private readonly js: JetStreamClient;

  constructor(
    private readonly bus: NatsBus,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {
    this.js = jetstream(bus.nc);
  }

  async onApplicationBootstrap(): Promise<void> {
    await ensureAuditStream(this.bus.nc, this.bus.subjects, this.config.auditStream ?? AUDIT_STREAM_DEFAULTS);
  }

  publish(actorId: string, request: EdgeAgentRequest, status: string, traceparent: string | undefined): void {
    if (!isAudited(request.action)) return;
    this.send(auditRecord(actorId, { ...request, action: request.action }, status, traceparent));
  }

  /** A refused call of an authenticated caller, whatever its action (docs/security.md "Audit"). */
  publishRefused(actorId: string, body: unknown, status: string, traceparent: string | undefined): void {
    this.send(refusedAuditRecord(actorId, body, status, traceparent));
  }

  private send(record: AuditRecord): void {
    const actorId = record.actor_id;
    const body = encodeJson(record);
    withSendSpan(this.bus.subjects.auditRecords, { messageId: record.id, bodySize: body.length }, (headers) =>
      this.js.publish(this.bus.subjects.auditRecords, body, {
        msgID: record.id,
        timeout: AUDIT_PUBLISH_TIMEOUT_MS,
        headers,
      }),
    ).catch((error: unknown) => {
      this.log.error(
        `Audit record ${record.id} (${record.action} by ${actorId}) not stored: ${(error as Error).message}`,
      );
    });
  }
}
