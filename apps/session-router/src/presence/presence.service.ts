import { Inject, Injectable, Logger } from '@nestjs/common';
import { Limits, type EdgeHeartbeat, type PresenceReply } from '#contracts';
import { EdgeCredentials } from '../common/edge-credentials.js';
import type { RouterConfig } from '../config.js';
import { EDGE_ID_PATTERN } from '../common/limits.js';
import { presenceTtlMs } from '../common/presence-record.js';
import { ROUTER_CONFIG } from '../common/tokens.js';
import { PresenceRepository } from './presence.repository.js';

@Injectable()
export class PresenceService {
  private readonly log = new Logger(PresenceService.name);

  constructor(
    @Inject(ROUTER_CONFIG) private readonly config: RouterConfig,
    private readonly repository: PresenceRepository,
    private readonly credentials: EdgeCredentials,
  ) {}

  /** Records a heartbeat's presence; `bootId` is its process's boot id, when it sent one. */
  async heartbeat(heartbeat: EdgeHeartbeat, bootId?: string): Promise<void> {
    if (!EDGE_ID_PATTERN.test(heartbeat.edge_id)) {
      this.log.warn('Heartbeat with an invalid edge id ignored.');
      return;
    }
    if (!(await this.credentials.verify(heartbeat.edge_id, heartbeat.edge_token))) {
      this.log.warn(`Heartbeat from edge ${heartbeat.edge_id} refused: bad edge token.`);
      return;
    }
    await this.repository.record(heartbeat.edge_id, {
      device: heartbeat.device,
      agent_kinds: heartbeat.agent_kinds,
      installations: heartbeat.installations.length,
      live_sessions: heartbeat.live_sessions,
      max_sessions: heartbeat.max_sessions,
      seen_at: Date.now(),
      ttl_ms: presenceTtlMs(heartbeat),
      ...(heartbeat.leaving ? { leaving: true } : {}),
      ...(bootId ? { boot_id: bootId } : {}),
    });
  }

  async online(edgeIds: string[]): Promise<PresenceReply> {
    // The api asks for one page of connectors at most; more is a caller bug, not a reason to scan.
    const ids = [...new Set(edgeIds)]
      .filter((id) => EDGE_ID_PATTERN.test(id))
      .slice(0, Limits.CONNECTORS_LIST_MAX);
    return { online: await this.repository.online(ids) };
  }
}
