import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import {
  edgeToken,
  Limits,
  type ConnectorDeleteReply,
  type ConnectorEnrollReply,
  type ConnectorEnrollRequest,
  type ConnectorListReply,
  type ConnectorListRequest,
  type ConnectorRecord,
  type EdgeCredentialReply,
} from '#contracts';
import { ServiceError } from '#messaging';
import type { HistoryConfig } from '../config.js';
import { ConnectorNotFoundError, InvalidRequestError } from '../common/errors.js';
import { parseEdgeId, requireActorId } from '../common/ids.js';
import { HISTORY_CONFIG } from '../common/tokens.js';
import { ConnectorsRepository, type StoredConnector } from './connectors.repository.js';
import { EdgeAuthority } from './edge-authority.js';
import { GrantsNotifier } from './grants-notifier.js';

/** Connector names and devices are labels shown in lists; the same bound as a title. */
const CONNECTOR_LABEL_MAX_RUNES = Limits.TITLE_MAX_RUNES;

/** The actor already has Limits.CONNECTORS_PER_ACTOR_MAX connectors. */
export class ConnectorLimitError extends ServiceError {
  constructor() {
    super('limit_reached', `At most ${Limits.CONNECTORS_PER_ACTOR_MAX} connectors per user.`);
  }
}

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
export class ConnectorsService implements OnApplicationBootstrap {
  private readonly log = new Logger(ConnectorsService.name);

  constructor(
    private readonly connectors: ConnectorsRepository,
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly grants: GrantsNotifier,
    private readonly authority: EdgeAuthority,
  ) {}

  /**
   * With an edge authority, push the account JWT once at boot: it proves the keys fit the
   * servers, and a resolver that lost its copy gets the revocation list back.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.authority.enabled) await this.publishRevocations();
  }

  /** The connector's stored id when the actor owns it; ConnectorNotFoundError otherwise. */
  async requireOwned(actorId: string, edgeId: string): Promise<bigint> {
    const id = parseEdgeId(edgeId);
    if (id === null) throw new ConnectorNotFoundError();
    const connector = await this.connectors.findOwned(requireActorId(actorId), id);
    if (!connector) throw new ConnectorNotFoundError();
    return connector.id;
  }

  async list(request: ConnectorListRequest): Promise<ConnectorListReply> {
    const limit = Math.min(request.limit ?? Limits.CONNECTORS_LIST_MAX, Limits.CONNECTORS_LIST_MAX);
    const after = request.after === undefined ? undefined : parseEdgeId(request.after);
    if (after === null) throw new InvalidRequestError('after must be a connector id.');
    const rows = await this.connectors.listOwned(requireActorId(request.actor_id), after, limit);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      connectors: page.map(toRecord),
      ...(rows.length > limit && last && { next_after: last.id.toString() }),
    };
  }

  async enroll(request: ConnectorEnrollRequest): Promise<ConnectorEnrollReply> {
    const actorId = requireActorId(request.actor_id);
    checkLabel('name', request.name, true);
    checkLabel('device', request.device, false);
    let creds: string | undefined;
    const connector = await this.connectors.createBounded(
      actorId,
      Limits.CONNECTORS_PER_ACTOR_MAX,
      { name: request.name.trim(), device: request.device?.trim() },
      async (id) => {
        const user = await this.authority.mint(id.toString());
        creds = user?.creds;
        return user?.publicKey ?? null;
      },
    );
    if (!connector) throw new ConnectorLimitError();
    const id = connector.id.toString();
    this.log.log(`Connector ${id} enrolled for actor ${actorId}.`);
    this.grants.changed(actorId);
    return this.credentialsReply(connector, creds);
  }

  /** New token and NATS user for the actor's connector; the old ones stop working now. */
  async rotate(actorId: string, edgeId: string): Promise<ConnectorEnrollReply> {
    const id = parseEdgeId(edgeId);
    if (id === null) throw new ConnectorNotFoundError();
    let creds: string | undefined;
    const rotated = await this.connectors.rotate(requireActorId(actorId), id, async () => {
      const user = await this.authority.mint(edgeId);
      creds = user?.creds;
      return user?.publicKey ?? null;
    });
    if (!rotated) throw new ConnectorNotFoundError();
    this.log.log(`Connector ${edgeId} of actor ${actorId} got new credentials.`);
    await this.revoked(edgeId, rotated.revokedKey);
    return this.credentialsReply(rotated.connector, creds);
  }

  /** Deletes the actor's connector with its accesses, and revokes its token and NATS user. */
  async delete(actorId: string, edgeId: string): Promise<ConnectorDeleteReply> {
    const id = parseEdgeId(edgeId);
    if (id === null) throw new ConnectorNotFoundError();
    const deleted = await this.connectors.delete(requireActorId(actorId), id);
    if (!deleted) throw new ConnectorNotFoundError();
    this.log.log(`Connector ${edgeId} of actor ${actorId} deleted.`);
    this.grants.changed(actorId);
    await this.revoked(edgeId, deleted.revokedKey);
    return { connector: toRecord(deleted.connector) };
  }

  async credential(edgeId: string): Promise<EdgeCredentialReply> {
    const id = parseEdgeId(edgeId);
    const generation = id === null ? null : await this.connectors.generationOf(id);
    if (generation === null) throw new ConnectorNotFoundError();
    return { generation };
  }

  private credentialsReply(connector: StoredConnector, creds: string | undefined): ConnectorEnrollReply {
    const id = connector.id.toString();
    return {
      connector: toRecord(connector),
      edge_token: edgeToken(this.config.edgeSecret, id, connector.credentialGeneration),
      ...(creds && { nats_creds: creds }),
    };
  }

  /**
   * Routers drop the edge's cached token generation at once; with an edge authority, the
   * servers get the new revocation list (and drop the edge's connection). The change is
   * committed already: a failed push is logged and retried at the next boot or revocation.
   */
  private async revoked(edgeId: string, revokedKey: string | null): Promise<void> {
    this.grants.edgeCredentialsChanged(edgeId);
    if (!revokedKey) return;
    try {
      await this.publishRevocations();
    } catch (error) {
      this.log.error(`Revocation list not pushed after edge ${edgeId} changed: ${(error as Error).message}`);
    }
  }

  private publishRevocations(): Promise<void> {
    return this.connectors.withRevocations((revocations) => this.authority.publish(revocations));
  }
}
