// edge_agent_v1 on `<ns>.edge.<edgeId>.rpc`. This is the hot path, so it is a plain nats.js
// callback subscription rather than a Nest transport: size cap, strict decode, envelope checks,
// a bounded number of concurrent calls and a deadline per call, then one SessionsService call.
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Msg, Subscription } from '@nats-io/transport-node';
import {
  Limits,
  edgeAgentRpcRequestSchema,
  encodeWire,
  result,
  validateRpcEnvelope,
  type EdgeAgentResult,
  type EdgeAgentStatus,
} from '#contracts';
import { decodeJson, withIncomingTrace, NatsBus } from '#messaging';
import type { EdgeConfig } from '../config.js';
import { EDGE_CONFIG } from '../common/tokens.js';
import { SessionsService } from '../sessions/sessions.service.js';

@Injectable()
export class EdgeRpcHandler {
  private readonly log = new Logger(EdgeRpcHandler.name);
  private subscription: Subscription | null = null;
  private shuttingDown = false;
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  /** Calls holding a slot: released when the work settles, not when a deadline answered for it. */
  private slotsUsed = 0;

  constructor(
    private readonly bus: NatsBus,
    @Inject(EDGE_CONFIG) private readonly config: EdgeConfig,
    private readonly sessions: SessionsService,
  ) {}

  listen(): void {
    const subject = this.bus.subjects.edgeRpc(this.config.edgeId);
    this.subscription = this.bus.nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error) {
          this.log.error(`Subscription to ${subject} failed: ${error.message}`);
          return;
        }
        this.onMessage(msg);
      },
    });
  }

  private reply(msg: Msg, value: EdgeAgentResult): void {
    let data = encodeWire(value);
    if (data.length > Limits.RPC_PAYLOAD_LIMIT_BYTES) {
      this.log.error(`A ${value.status} reply of ${data.length} bytes exceeded the RPC limit.`);
      data = encodeWire(result('unavailable'));
    }
    try {
      msg.respond(data);
    } catch (error) {
      this.log.warn(`Could not answer an RPC: ${(error as Error).message}`);
    }
  }

  private refuse(msg: Msg, status: EdgeAgentStatus): void {
    this.reply(msg, result(status));
  }

  private onMessage(msg: Msg): void {
    if (!msg.reply) return;
    if (this.shuttingDown) return this.refuse(msg, 'unavailable');
    if (msg.data.length > Limits.RPC_PAYLOAD_LIMIT_BYTES) return this.refuse(msg, 'invalid_request');
    let payload: unknown;
    try {
      payload = decodeJson(msg.data, msg.subject);
    } catch {
      return this.refuse(msg, 'invalid_request');
    }
    const parsed = edgeAgentRpcRequestSchema.safeParse(payload);
    if (!parsed.success || !validateRpcEnvelope(parsed.data).ok) return this.refuse(msg, 'invalid_request');
    if (this.slotsUsed >= Limits.EDGE_CONCURRENT_RPCS) return this.refuse(msg, 'busy');

    const rpc = parsed.data;
    const controller = new AbortController();
    this.slotsUsed += 1;
    let answered = false;
    const deadline = setTimeout(() => {
      // The action sees the abort (a watch answers `unavailable`); a stuck one is answered here.
      controller.abort();
      if (!answered) {
        answered = true;
        this.log.warn(`Action ${rpc.request.action} missed its ${Limits.EDGE_RPC_TIMEOUT_MS} ms deadline.`);
        this.refuse(msg, 'unavailable');
      }
    }, Limits.EDGE_RPC_TIMEOUT_MS);
    // A child of the router's request span (trace context in the headers): one trace per call.
    const work = withIncomingTrace(msg, () => this.sessions.handle(rpc, controller.signal), {
      attributes: { 'tether.action': rpc.request.action },
    })
      .then((value) => {
        if (!answered) {
          answered = true;
          this.reply(msg, value);
        }
      })
      .finally(() => {
        clearTimeout(deadline);
        this.slotsUsed -= 1;
        this.inFlight.delete(work);
      });
    this.inFlight.set(work, controller);
  }

  /** Stops taking calls (late ones get `unavailable`), cancels waits and lets the rest finish. */
  async close(): Promise<void> {
    this.shuttingDown = true;
    for (const controller of this.inFlight.values()) controller.abort();
    await Promise.allSettled([...this.inFlight.keys()]);
    if (this.subscription) {
      this.subscription.unsubscribe();
      this.subscription = null;
    }
  }
}
