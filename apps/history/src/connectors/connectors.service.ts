import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  edgeToken,
  Limits,
  type ConnectorEnrollReply,
  type ConnectorEnrollRequest,
  type ConnectorListReply,
  type ConnectorRecord,
} from '#contracts';
import type { HistoryConfig } from '../config.js';
import { ConnectorNotFoundError, InvalidRequestError } from '../common/errors.js';
import { parseEdgeId, requireActorId } from '../common/ids.js';
import { HISTORY_CONFIG } from '../common/tokens.js';
import { ConnectorsRepository, type StoredConnector } from './connectors.repository.js';
import { GrantsNotifier } from './grants-notifier.js';

/** Connector names and devices are labels shown in lists; the same bound as a title. */
const CONNECTOR_LABEL_MAX_RUNES = Limits.TITLE_MAX_RUNES;

function toRecord(connector: StoredConnector): ConnectorRecord {
  const record: ConnectorRecord = { id: connector.id.toString(), name: connector.name };
  if (connector.device) record.device = connector.device;
  return record;
}

function checkLabel(field: string, value: unknown, required: boolean): void {
  if (value === undefined && !required) return;
  if (typeof value !== 'string' || value.trim() === '' || [...value].length > CONNECTOR_LABEL_MAX_RUNES) {
    throw new InvalidRequestError(`${field} must be 1 to ${CONNECTOR_LABEL_MAX_RUNES} characters.`);
  }
}

@Injectable()
export class ConnectorsService {
  private readonly logger = new Logger(ConnectorsService.name);

  constructor(
    private readonly connectors: ConnectorsRepository,
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly grants: GrantsNotifier,
  ) {}

  /** The connector's stored id when the actor owns it; ConnectorNotFoundError otherwise. */
  async requireOwned(actorId: string, edgeId: string): Promise<bigint> {
    const id = parseEdgeId(edgeId);
    if (id === null) throw new ConnectorNotFoundError();
    const connector = await this.connectors.findOwned(requireActorId(actorId), id);
    if (!connector) throw new ConnectorNotFoundError();
    return connector.id;
  }

  async list(actorId: string): Promise<ConnectorListReply> {
    const connectors = await this.connectors.listOwned(requireActorId(actorId), Limits.CONNECTORS_LIST_MAX);
    return { connectors: connectors.map(toRecord) };
  }

  async enroll(request: ConnectorEnrollRequest): Promise<ConnectorEnrollReply> {
    const actorId = requireActorId(request.actor_id);
    checkLabel('name', request.name, true);
    checkLabel('device', request.device, false);
    const connector = await this.connectors.create(actorId, request.name.trim(), request.device?.trim());
    const id = connector.id.toString();
    this.logger.log(`Connector ${id} enrolled for actor ${actorId}.`);
    this.grants.changed(actorId);
    return { connector: toRecord(connector), edge_token: edgeToken(this.config.edgeSecret, id) };
  }
}
