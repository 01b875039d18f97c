import { Inject, Injectable, Logger } from '@nestjs/common';
import { Limits, type AgentConnector, type ConnectorRecord } from '#contracts';
import { RpcUnavailableError } from '#messaging';
import type { ApiConfig } from '../config.js';
import { ServiceClient } from '../common/service-client.js';
import { API_CONFIG } from '../common/tokens.js';
import type { EnrollInput } from './connectors.schemas.js';

export interface Enrollment {
  connector: ConnectorRecord;
  edge_token: string;
  /** What the owner sets to start the edge-connector for this connector. */
  env: { TETHER_EDGE_ID: string; TETHER_EDGE_TOKEN: string; TETHER_NAMESPACE: string };
}

/** The actor's connectors (history) with their presence (router), and enrollment of new ones. */
@Injectable()
export class ConnectorsService {
  private readonly logger = new Logger(ConnectorsService.name);

  constructor(
    private readonly services: ServiceClient,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  async list(actorId: string): Promise<AgentConnector[]> {
    const { connectors } = await this.services.history('historyConnectorList', { actor_id: actorId });
    const owned = connectors.slice(0, Limits.CONNECTORS_LIST_MAX);
    if (owned.length === 0) return [];
    const online = await this.onlineEdges(owned.map((connector) => connector.id));
    return owned.map((connector) => ({
      id: connector.id,
      name: connector.name,
      online: online.has(connector.id),
      ...(connector.device ? { device: connector.device } : {}),
    }));
  }

  async enroll(actorId: string, input: EnrollInput): Promise<Enrollment> {
    const { connector, edge_token } = await this.services.history('historyConnectorEnroll', {
      actor_id: actorId,
      name: input.name,
      ...(input.device ? { device: input.device } : {}),
    });
    this.logger.log(`Actor ${actorId} enrolled connector ${connector.id}.`);
    return {
      connector,
      edge_token,
      env: {
        TETHER_EDGE_ID: connector.id,
        TETHER_EDGE_TOKEN: edge_token,
        TETHER_NAMESPACE: this.config.namespace,
      },
    };
  }

  /** Without a router to ask, every connector shows as offline rather than the list failing. */
  private async onlineEdges(edgeIds: string[]): Promise<ReadonlySet<string>> {
    try {
      const { online } = await this.services.router('routerPresence', { edge_ids: edgeIds });
      return new Set(online);
    } catch (error) {
      if (!(error instanceof RpcUnavailableError)) throw error;
      this.logger.warn(`Presence unknown, listing connectors as offline: ${error.message}`);
      return new Set();
    }
  }
}
