import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { EdgeCredentialsChangedNotice, GrantsChangedNotice, Subjects } from '#contracts';
import { encodeJson, NATS_CONNECTION } from '#messaging';
import { SUBJECTS } from '../common/tokens.js';

/**
 * Tells the api replicas that an actor's grants changed, so the authorization decisions they
 * remember for that actor are dropped at once (docs/contract.md "Authorization"). Core NATS,
 * fire-and-forget: a lost notice is bounded by the api's short TTL and by its reset on reconnect.
 */
@Injectable()
export class GrantsNotifier {
  private readonly log = new Logger(GrantsNotifier.name);

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
  ) {}

  changed(actorId: string): void {
    const notice: GrantsChangedNotice = { actor_id: actorId };
    try {
      this.nc.publish(this.subjects.grantsChanged, encodeJson(notice));
    } catch (error) {
      // The change itself is committed; only the early invalidation is lost.
      this.log.warn(`Grants-changed notice for actor ${actorId} not sent: ${(error as Error).message}`);
    }
  }

  /** Tells the routers an edge's credentials changed, so its cached token generation is dropped. */
  edgeCredentialsChanged(edgeId: string): void {
    const notice: EdgeCredentialsChangedNotice = { edge_id: edgeId };
    try {
      this.nc.publish(this.subjects.edgeCredentialsChanged, encodeJson(notice));
    } catch (error) {
      // The routers' cache expires on its own (a few seconds); only the early drop is lost.
      this.log.warn(`Credentials notice for edge ${edgeId} not sent: ${(error as Error).message}`);
    }
  }
}
