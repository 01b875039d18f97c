import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Msg, Subscription } from '@nats-io/transport-node';
import { parseRouterHeartbeat, type RouterHeartbeat } from '#contracts';
import { decodeJson, NatsBus } from '#messaging';
import { recordRouterCallsResent } from '#telemetry';
import { callWithResends, type ResendableCall } from './router-calls.js';
import { RouterLiveness } from './router-liveness.js';

/** How often silence is checked: a lost replica is known within a quarter second of its bound. */
const CHECK_INTERVAL_MS = 250;

/** A router's heartbeat, or null for anything else on the subject (ignored). */
function heartbeatOf(msg: Msg): RouterHeartbeat | null {
  try {
    return parseRouterHeartbeat(decodeJson<unknown>(msg.data, msg.subject));
  } catch {
    return null;
  }
}

/**
 * The router replicas this api replica hears (their heartbeats on `<ns>.router.heartbeat`) and
 * the calls it has in flight to them that may be sent again. A replica that falls silent (killed,
 * out of memory, its node gone) may have held any of those calls, and NATS answers none of them
 * before its timeout: each is sent again to the replicas left, where the operation ledger turns
 * a duplicate of a mutation into a replay. Silence is not counted while our own connection is
 * down, and is counted again from its return.
 */
@Injectable()
export class RouterReplicas implements OnModuleInit, OnApplicationShutdown {
  private readonly log = new Logger(RouterReplicas.name);
  private readonly liveness = new RouterLiveness();
  private readonly calls = new Set<ResendableCall>();
  private subscription: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private connected = true;

  constructor(private readonly bus: NatsBus) {}

  onModuleInit(): void {
    this.subscription = this.bus.nc.subscribe(this.bus.subjects.routerHeartbeat, {
      callback: (error, msg) => {
        const heartbeat = error ? null : heartbeatOf(msg);
        if (heartbeat) this.liveness.heard(heartbeat, performance.now());
      },
    });
    this.timer = setInterval(() => this.check(), CHECK_INTERVAL_MS);
    this.timer.unref();
    void this.watchConnection();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
    this.subscription?.unsubscribe();
  }

  /** Runs a call that is sent again if a router replica is lost while it waits. */
  call<T>(attempt: (timeoutMs: number) => Promise<T>, timeoutMs: number): Promise<T> {
    return callWithResends(attempt, timeoutMs, this.calls);
  }

  private check(): void {
    if (!this.connected) return;
    const now = performance.now();
    const lost = this.liveness.lost(now);
    if (lost.length === 0) return;
    let resent = 0;
    for (const call of [...this.calls]) {
      if (call.startedAt < now && call.resend()) resent += 1;
    }
    recordRouterCallsResent(resent);
    this.log.warn(
      `Router replica ${lost.join(', ')} stopped sending heartbeats; ${resent} call(s) it may have held sent again.`,
    );
  }

  private async watchConnection(): Promise<void> {
    try {
      for await (const status of this.bus.nc.status()) {
        if (status.type === 'disconnect') this.connected = false;
        if (status.type === 'reconnect') {
          this.connected = true;
          this.liveness.reconnected(performance.now());
        }
      }
    } catch (error) {
      this.log.warn(`Connection status watch ended: ${(error as Error).message}`);
    }
  }
}
