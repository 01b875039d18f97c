import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  isEdgeId,
  Limits,
  type AgentConnector,
  type ConnectorEnrollReply,
  type ConnectorRecord,
} from '#contracts';
import { RpcUnavailableError } from '#messaging';
import type { ApiConfig } from '../config.js';
import { Page } from '../common/envelope.interceptor.js';
import { ConnectorNotFoundError, InvalidPageError } from '../common/errors.js';
import { ServiceClient } from '../common/service-client.js';
import { API_CONFIG } from '../common/tokens.js';
import type { EnrollInput } from './connectors.schemas.js';

export interface Enrollment {
  connector: ConnectorRecord;
  edge_token: string;
  /**
   * The edge's own NATS user as a `.creds` file, when the deployment runs NATS with
   * decentralised auth; the owner saves it and points TETHER_NATS_CREDS at it.
   */
  nats_creds?: string;
  /** What the owner sets to start the edge-connector for this connector. */
  env: { TETHER_EDGE_ID: string; TETHER_EDGE_TOKEN: string; TETHER_NAMESPACE: string };
}

/** `limit` of GET /connectors: 1..CONNECTORS_LIST_MAX, the maximum when absent. */
function pageLimit(value: unknown): number {
  if (value === undefined) return Limits.CONNECTORS_LIST_MAX;
  const limit = typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > Limits.CONNECTORS_LIST_MAX) {
    throw new InvalidPageError(`limit must be 1 to ${Limits.CONNECTORS_LIST_MAX}`);
  }
  return limit;
}

/** `cursor` of GET /connectors: the `next_cursor` of the previous page (a connector id). */
function pageCursor(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !isEdgeId(value)) throw new InvalidPageError('bad cursor');
  return value;
}

/** The actor's connectors (history) with their presence (router), and their credentials. */
@Injectable()
export class ConnectorsService {
  private readonly log = new Logger(ConnectorsService.name);

  constructor(
    private readonly services: ServiceClient,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {}

  async list(actorId: string, cursor: unknown, limit: unknown): Promise<Page<AgentConnector[]>> {
    const after = pageCursor(cursor);
    const pageSize = pageLimit(limit);
    const reply = await this.services.history('historyConnectorList', {
      actor_id: actorId,
      limit: pageSize,
      ...(after !== undefined && { after }),
    });
    // History honours the limit; the slice keeps the presence request bounded whatever it sends.
    const connectors = reply.connectors.slice(0, pageSize);
    const next_after = reply.next_after;
    if (connectors.length === 0) return new Page([], undefined);
    const online = await this.onlineEdges(connectors.map((connector) => connector.id));
    const items = connectors.map((connector) => ({
      id: connector.id,
      name: connector.name,
      online: online.has(connector.id),
      ...(connector.device ? { device: connector.device } : {}),
    }));
    return new Page(items, next_after);
  }

  async enroll(actorId: string, input: EnrollInput): Promise<Enrollment> {
    const reply = await this.services.history('historyConnectorEnroll', {
      actor_id: actorId,
      name: input.name,
      ...(input.device ? { device: input.device } : {}),
    });
    this.log.log(`Actor ${actorId} enrolled connector ${reply.connector.id}.`);
    return this.enrollment(reply);
  }

  async rotate(actorId: string, edgeId: string): Promise<Enrollment> {
    if (!isEdgeId(edgeId)) throw new ConnectorNotFoundError();
    const reply = await this.services.history('historyConnectorRotate', {
      actor_id: actorId,
      edge_id: edgeId,
    });
    this.log.log(`Actor ${actorId} rotated the credentials of connector ${edgeId}.`);
    return this.enrollment(reply);
  }

  async remove(actorId: string, edgeId: string): Promise<ConnectorRecord> {
    if (!isEdgeId(edgeId)) throw new ConnectorNotFoundError();
    const { connector } = await this.services.history('historyConnectorDelete', {
      actor_id: actorId,
      edge_id: edgeId,
    });
    this.log.log(`Actor ${actorId} deleted connector ${edgeId}.`);
    return connector;
  }

  private enrollment(reply: ConnectorEnrollReply): Enrollment {
    return {
      connector: reply.connector,
      edge_token: reply.edge_token,
      ...(reply.nats_creds && { nats_creds: reply.nats_creds }),
      env: {
        TETHER_EDGE_ID: reply.connector.id,
        TETHER_EDGE_TOKEN: reply.edge_token,
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
      this.log.warn(`Presence unknown, listing connectors as offline: ${error.message}`);
      return new Set();
    }
  }
}
