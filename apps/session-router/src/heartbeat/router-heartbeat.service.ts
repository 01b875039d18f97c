import { randomBytes } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Limits, type RouterHeartbeat } from '#contracts';
import { encodeJson, NatsBus } from '#messaging';

/**
 * This replica's heartbeat to the api replicas (`<ns>.router.heartbeat`), so that an api replica
 * learns when a router replica died with its calls in flight and sends them again
 * (apps/api/src/common/router-replicas.ts). The last one, on shutdown, says it is leaving: by
 * then the transport has answered every request it took, so nothing needs sending again.
 */
@Injectable()
export class RouterHeartbeatService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger(RouterHeartbeatService.name);
  /** Random per process: a restarted replica is a new one. */
  readonly instance = randomBytes(12).toString('hex');
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly bus: NatsBus) {}

  onApplicationBootstrap(): void {
    this.beat(false);
    this.timer = setInterval(() => this.beat(false), Limits.ROUTER_HEARTBEAT_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
    this.beat(true);
  }

  private beat(leaving: boolean): void {
    const heartbeat: RouterHeartbeat = {
      instance: this.instance,
      interval_ms: Limits.ROUTER_HEARTBEAT_INTERVAL_MS,
      ...(leaving ? { leaving } : {}),
    };
    try {
      this.bus.nc.publish(this.bus.subjects.routerHeartbeat, encodeJson(heartbeat));
    } catch (error) {
      // The connection is closing or gone; the api counts the silence instead.
      this.log.debug(`Heartbeat not sent: ${(error as Error).message}`);
    }
  }
}
