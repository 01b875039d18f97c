import { Injectable, Logger } from '@nestjs/common';
import type { EdgeCredentialsChangedNotice, GrantsChangedNotice } from '#contracts';
import { encodeJson, NatsBus } from '#messaging';

/**
 * Tells the api replicas that an actor's grants changed, so the authorization decisions they
 * remember for that actor are dropped at once (docs/contract.md "Authorization"). Core NATS,
 * fire-and-forget: a lost notice is bounded by the api's short TTL and by its reset on reconnect.
 */
@Injectable()
export class GrantsNotifier {
  private readonly log = new Logger(GrantsNotifier.name);

  constructor(private readonly bus: NatsBus) {}

  changed(actorId: string): void {
    const notice: GrantsChangedNotice = { actor_id: actorId };
    try {
      this.bus.nc.publish(this.bus.subjects.grantsChanged, encodeJson(notice));
    } catch (error) {
      // The change itself is committed; only the early invalidation is lost.
      this.log.warn(`Grants-changed notice for actor ${actorId} not sent: ${(error as Error).message}`);
    }
  }

  /** Tells the routers an edge's credentials changed, so its cached token generation is dropped. */
  edgeCredentialsChanged(edgeId: string): void {
    const notice: EdgeCredentialsChangedNotice = { edge_id: edgeId };
    try {
      this.bus.nc.publish(this.bus.subjects.edgeCredentialsChanged, encodeJson(notice));
    } catch (error) {
      // The routers' cache expires on its own (a few seconds); only the early drop is lost.
      this.log.warn(`Credentials notice for edge ${edgeId} not sent: ${(error as Error).message}`);
    }
  }
}
