// One writer at a time per session journal, across every router replica.
//
// Why: every append names the subject's last stream sequence it expects
// (`Nats-Expected-Last-Subject-Sequence`), and on a single JetStream server that check is atomic,
// so racing writers (an edge update and a send's submission row on two replicas) serialize by
// losing and retrying. On a replicated stream it is not: the leader checks before proposing, so two
// publishes in flight at once can both pass and both be stored with the same predecessor (found
// under load on a 3-node cluster: nats-server issue 4320, fixed in 2.9.21; a leader change can
// still drop the leader's in-flight view). A fork gives two rows one journal position, and
// history can keep only one: a send's settlement row was lost that way. Holding this lock while
// reading the head, publishing and caching the new head means no two appends of one session are
// ever in flight together, whatever the server guarantees.
//
// Where Redis fails over by itself (Cluster, Sentinel), a master replicates asynchronously: one
// that dies right after granting the lock could leave a promoted replica that never saw it, and
// hand the lock to a second writer. So a granted lock is first confirmed on one replica (WAIT).
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RouterConfig } from '../config.js';
import type { RedisClient } from '../common/redis-client.js';
import { LuaScript } from '../common/lua-script.js';
import { RedisKeys } from '../common/redis-keys.js';
import { REDIS, ROUTER_CONFIG } from '../common/tokens.js';

/**
 * How long a holder may keep the lock: longer than one append (a JetStream publish bounded by its
 * own timeout, a Redis write) so a live holder never loses it, short enough that a replica dying
 * while holding it stalls the session only briefly.
 */
export const APPEND_LOCK_TTL_MS = 10_000;
/** How long a writer waits for the lock before its caller is told to retry. */
const ACQUIRE_TIMEOUT_MS = 5_000;
/** Pause between attempts, randomised so waiting writers spread out. */
const RETRY_MIN_MS = 2;
const RETRY_JITTER_MS = 8;
/**
 * How long a granted lock waits for a replica's acknowledgement. A replica on the same network
 * answers within a millisecond; one that is down (the master runs alone until it is back) costs
 * every append this much, so it stays small, and the append goes ahead: the lock is then exactly
 * as safe as the master itself.
 */
export const APPEND_LOCK_REPLICA_WAIT_MS = 50;

const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

@Injectable()
export class JournalAppendLock {
  private readonly log = new Logger(JournalAppendLock.name);
  /** Replicas that must hold a granted lock: 1 where Redis fails over by itself, else 0. */
  private readonly replicas: number;
  private unconfirmedSince = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
    @Inject(ROUTER_CONFIG) config: RouterConfig,
  ) {
    this.replicas = config.redis.mode === 'standalone' ? 0 : 1;
  }

  /**
   * Runs `append` holding the session's lock; `onTimeout()` is thrown when the lock stays taken
   * past ACQUIRE_TIMEOUT_MS (a retryable error for the caller).
   */
  async holding<T>(sessionId: string, onTimeout: () => Error, append: () => Promise<T>): Promise<T> {
    const key = this.keys.appendLock(sessionId);
    const token = randomBytes(12).toString('hex');
    const deadline = Date.now() + ACQUIRE_TIMEOUT_MS;
    while (!(await this.acquire(key, token))) {
      if (Date.now() > deadline) throw onTimeout();
      await new Promise((resolve) => setTimeout(resolve, RETRY_MIN_MS + Math.random() * RETRY_JITTER_MS));
    }
    try {
      return await append();
    } finally {
      // Only our own token is removed: a holder that outlived its TTL must not free another's lock.
      await RELEASE.run(this.redis, [key], [token]).catch(() => undefined);
    }
  }

  /**
   * One attempt. With replicas to confirm, SET and WAIT go in one pipeline: it keeps to the key's
   * slot, so WAIT reaches the master that granted the lock on the connection that wrote it.
   */
  private async acquire(key: string, token: string): Promise<boolean> {
    if (this.replicas === 0) {
      return (await this.redis.set(key, token, 'PX', APPEND_LOCK_TTL_MS, 'NX')) === 'OK';
    }
    const results = await this.redis
      .pipeline()
      .set(key, token, 'PX', APPEND_LOCK_TTL_MS, 'NX')
      .wait(this.replicas, APPEND_LOCK_REPLICA_WAIT_MS)
      .exec();
    const [set, wait] = results ?? [];
    if (set?.[0]) throw set[0];
    if (set?.[1] !== 'OK') return false;
    this.noteConfirmation(!wait?.[0] && Number(wait?.[1]) >= this.replicas);
    return true;
  }

  /** Says once when locks start going unconfirmed (no replica in sync) and once when they stop. */
  private noteConfirmation(confirmed: boolean): void {
    if (confirmed) {
      if (this.unconfirmedSince !== 0) {
        this.log.log('Journal append locks are confirmed on a replica again.');
        this.unconfirmedSince = 0;
      }
    } else if (this.unconfirmedSince === 0) {
      this.unconfirmedSince = Date.now();
      this.log.warn(
        'A journal append lock was granted without a replica confirming it; appends go on, as safe as the master alone.',
      );
    }
  }
}
