import { Injectable, Logger } from '@nestjs/common';
import {
  Limits,
  type AccessCreateRequest,
  type AccessDeleteRequest,
  type AccessInput,
  type AccessListReply,
  type AccessListRequest,
  type AccessReply,
  type AccessUpdateRequest,
} from '#contracts';
import { isAgentKind, AGENT_KINDS } from '../common/agent-kinds.js';
import { AccessLimitError, AccessNotFoundError, InvalidRequestError } from '../common/errors.js';
import { newAccessId, requireActorId } from '../common/ids.js';
import { ConnectorsService } from '../connectors/connectors.service.js';
import { GrantsNotifier } from '../connectors/grants-notifier.js';
import { toAgentAccess } from './access.mapper.js';
import { AccessesRepository, type AccessFields } from './accesses.repository.js';

/**
 * Deepest page a list may ask for: the largest page size times this covers far more accesses
 * than one actor has, and keeps OFFSET scans bounded.
 */
const ACCESSES_PAGE_MAX = 1_000;
/** An access name is a label in lists, bounded like a session title. */
const ACCESS_NAME_MAX_RUNES = Limits.TITLE_MAX_RUNES;

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function boundedString(field: string, value: unknown, maxBytes: number): string {
  if (typeof value !== 'string' || value === '' || Buffer.byteLength(value) > maxBytes) {
    throw new InvalidRequestError(`access.${field} must be 1 to ${maxBytes} bytes.`);
  }
  return value;
}

@Injectable()
export class AccessesService {
  private readonly log = new Logger(AccessesService.name);

  constructor(
    private readonly accesses: AccessesRepository,
    private readonly connectors: ConnectorsService,
    private readonly grants: GrantsNotifier,
  ) {}

  async list(request: AccessListRequest): Promise<AccessListReply> {
    const actorId = requireActorId(request.actor_id);
    const page = request.page ?? 1;
    const pageSize = request.page_size ?? Limits.ACCESSES_PAGE_SIZE_DEFAULT;
    if (!isIntegerIn(page, 1, ACCESSES_PAGE_MAX)) {
      throw new InvalidRequestError(`page must be an integer from 1 to ${ACCESSES_PAGE_MAX}.`);
    }
    if (!isIntegerIn(pageSize, 1, Limits.ACCESSES_PAGE_SIZE_MAX)) {
      throw new InvalidRequestError(
        `page_size must be an integer from 1 to ${Limits.ACCESSES_PAGE_SIZE_MAX}.`,
      );
    }
    const { items, total } = await this.accesses.listOwned(actorId, (page - 1) * pageSize, pageSize);
    return { items: items.map(toAgentAccess), total, page, page_size: pageSize };
  }

  async create(request: AccessCreateRequest): Promise<AccessReply> {
    const actorId = requireActorId(request.actor_id);
    const input = this.checkInput(request.access);
    const edgeId = await this.connectors.requireOwned(actorId, input.edge_id);
    const access = await this.accesses.createBounded(
      actorId,
      Limits.ACCESSES_PER_ACTOR_MAX,
      newAccessId(),
      this.fields(input, edgeId),
    );
    if (!access) throw new AccessLimitError();
    this.log.log(`Access ${access.id} created for actor ${actorId} on connector ${edgeId}.`);
    return { access: toAgentAccess(access) };
  }

  async update(request: AccessUpdateRequest): Promise<AccessReply> {
    const actorId = requireActorId(request.actor_id);
    const id = this.checkId(request.id);
    const input = this.checkInput(request.access);
    // A missing or foreign access is reported before the connector, so the reply never reveals
    // whether somebody else's access exists.
    if (!(await this.accesses.findOwned(actorId, id))) throw new AccessNotFoundError();
    const edgeId = await this.connectors.requireOwned(actorId, input.edge_id);
    const access = await this.accesses.updateOwned(actorId, id, this.fields(input, edgeId));
    // The api may remember the old edge/installation/project as authorized: drop it.
    this.grants.changed(actorId);
    if (!access) throw new AccessNotFoundError();
    this.log.log(`Access ${id} updated by actor ${actorId}.`);
    return { access: toAgentAccess(access) };
  }

  async delete(request: AccessDeleteRequest): Promise<AccessReply> {
    const actorId = requireActorId(request.actor_id);
    const access = await this.accesses.deleteOwned(actorId, this.checkId(request.id));
    if (!access) throw new AccessNotFoundError();
    this.grants.changed(actorId);
    this.log.log(`Access ${access.id} deleted by actor ${actorId}; its stored sessions were tombstoned.`);
    return { access: toAgentAccess(access) };
  }

  /** Ids are opaque 32-character hex strings; anything else cannot name an access. */
  private checkId(id: unknown): string {
    if (typeof id !== 'string' || !/^[0-9a-f]{32}$/.test(id)) throw new AccessNotFoundError();
    return id;
  }

  private checkInput(input: AccessInput | undefined): AccessInput {
    if (typeof input !== 'object' || input === null) throw new InvalidRequestError('access is required.');
    const name = boundedString('name', input.name, Limits.TEXT_MAX_BYTES);
    if ([...name].length > ACCESS_NAME_MAX_RUNES || name.trim() === '') {
      throw new InvalidRequestError(`access.name must be 1 to ${ACCESS_NAME_MAX_RUNES} characters.`);
    }
    if (typeof input.kind !== 'string' || !isAgentKind(input.kind)) {
      throw new InvalidRequestError(`access.kind must be one of ${AGENT_KINDS.join(', ')}.`);
    }
    return {
      name: name.trim(),
      kind: input.kind,
      // Its format is checked with ownership: a malformed id names no connector of the actor.
      edge_id: boundedString('edge_id', input.edge_id, Limits.OPAQUE_ID_LENGTH),
      installation_id: boundedString(
        'installation_id',
        input.installation_id,
        Limits.INSTALLATION_ID_MAX_BYTES,
      ),
      project: boundedString('project', input.project, Limits.PROJECT_MAX_BYTES),
    };
  }

  private fields(input: AccessInput, edgeId: bigint): AccessFields {
    return {
      name: input.name,
      kind: input.kind,
      edgeId,
      installationId: input.installation_id,
      project: input.project,
    };
  }
}
