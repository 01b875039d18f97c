// Announces this edge to the routers: who it is, what it can run and how full it is. A router
// counts the edge online while heartbeats keep arriving (2 of its announced intervals), and
// offline at once when the edge says it is leaving.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { EDGE_BOOT_ID_HEADER, Limits, type EdgeHeartbeat } from '#contracts';
import { encodeJson, withSendSpan, NatsBus } from '#messaging';
import { traceBackground } from '#telemetry';
import type { EdgeConfig } from '../config.js';
import { EDGE_CONFIG } from '../common/tokens.js';
import { AGENT_DRIVER, SessionsService } from '../sessions/sessions.service.js';
import type { AgentDriver } from '../agent/agent-driver.js';

@Injectable()
export class HeartbeatService {
  private readonly log = new Logger(HeartbeatService.name);
  private timer: NodeJS.Timeout | null = null;
  /** This process's boot id (EDGE_BOOT_ID_HEADER): routers release calls its predecessor held. */
  private readonly bootId = randomUUID();

  constructor(
    private readonly bus: NatsBus,
    @Inject(EDGE_CONFIG) private readonly config: EdgeConfig,
    @Inject(AGENT_DRIVER) private readonly driver: AgentDriver,
    private readonly sessions: SessionsService,
  ) {}

  heartbeat(): EdgeHeartbeat {
    return {
      edge_id: this.config.edgeId,
      edge_token: this.config.edgeToken,
      device: hostname(),
      agent_kinds: [...(this.driver.kinds ?? [this.driver.kind])],
      installations: this.sessions.knownInstallations,
      live_sessions: this.sessions.liveSessions,
      max_sessions: Limits.EDGE_LIVE_SESSIONS_MAX,
      sent_at: Date.now(),
      interval_ms: this.config.heartbeatIntervalMs,
    };
  }

  /**
   * One heartbeat, as a short background trace of its own (sampled by
   * TETHER_TRACE_BACKGROUND_RATIO): never part of whichever request's context was active when the
   * timer was set. `leaving` tells the routers the edge is shutting down.
   */
  private publish(leaving = false): void {
    const subject = this.bus.subjects.edgeHeartbeatOf(this.config.edgeId);
    void traceBackground('edge.heartbeat', () => {
      const body = encodeJson(leaving ? { ...this.heartbeat(), leaving: true } : this.heartbeat());
      const boot = natsHeaders();
      boot.set(EDGE_BOOT_ID_HEADER, this.bootId);
      return withSendSpan(subject, { bodySize: body.length, headers: boot }, (headers) => {
        this.bus.nc.publish(subject, body, { headers });
      });
    }).catch((error: unknown) => {
      this.log.warn(`Heartbeat not sent: ${(error as Error).message}`);
    });
  }

  start(): void {
    this.publish();
    this.timer = setInterval(() => this.publish(), this.config.heartbeatIntervalMs);
  }

  /**
   * Stops the heartbeats. `announce` tells the routers the edge is leaving (a clean shutdown), so
   * calls waiting on it are answered now instead of after its presence runs out.
   */
  stop(announce = false): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (announce) this.publish(true);
  }
}
