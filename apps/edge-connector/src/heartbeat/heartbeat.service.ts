// Announces this edge to the routers: who it is, what it can run and how full it is. A router
// counts the edge online while heartbeats keep arriving (EDGE_PRESENCE_TTL_MS).
import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Limits, type EdgeHeartbeat, type Subjects } from '#contracts';
import { NATS_CONNECTION, encodeJson } from '#messaging';
import type { EdgeConfig } from '../config.js';
import { EDGE_CONFIG, SUBJECTS } from '../common/tokens.js';
import { AGENT_DRIVER, SessionsService } from '../sessions/sessions.service.js';
import type { AgentDriver } from '../agent/agent-driver.js';

@Injectable()
export class HeartbeatService {
  private readonly log = new Logger(HeartbeatService.name);
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    @Inject(EDGE_CONFIG) private readonly config: EdgeConfig,
    @Inject(AGENT_DRIVER) private readonly driver: AgentDriver,
    private readonly sessions: SessionsService,
  ) {}

  heartbeat(): EdgeHeartbeat {
    return {
      edge_id: this.config.edgeId,
      edge_token: this.config.edgeToken,
      device: hostname(),
      agent_kinds: [this.driver.kind],
      installations: this.sessions.knownInstallations,
      live_sessions: this.sessions.liveSessions,
      max_sessions: Limits.EDGE_LIVE_SESSIONS_MAX,
      sent_at: Date.now(),
    };
  }

  private publish(): void {
    try {
      this.nc.publish(this.subjects.edgeHeartbeatOf(this.config.edgeId), encodeJson(this.heartbeat()));
    } catch (error) {
      this.log.warn(`Heartbeat not sent: ${(error as Error).message}`);
    }
  }

  start(): void {
    this.publish();
    this.timer = setInterval(() => this.publish(), Limits.EDGE_HEARTBEAT_INTERVAL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
