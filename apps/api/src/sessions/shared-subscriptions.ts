import { Injectable, Logger } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { NatsBus } from '#messaging';

/** What a listener gets for a payload that is not JSON: it still says "something changed". */
export const UNPARSED = Symbol('unparsed');

export type SharedMessage = unknown;
type Listener = (message: SharedMessage) => void;

interface Shared {
  subscription: Subscription;
  listeners: Set<Listener>;
}

/**
 * One core-NATS subscription per subject for every SSE stream of this process that listens to it
 * (a session's commit notices and lifecycle events): a notice carries a page of up to 256 KiB, so
 * it is parsed once and handed to each stream, not parsed again per stream, and the server holds
 * one interest per session instead of one per stream. Listeners get the same parsed value and
 * must not change it. The subscription goes with its last listener.
 */
@Injectable()
export class SharedSubscriptions {
  private readonly log = new Logger(SharedSubscriptions.name);
  private readonly shared = new Map<string, Shared>();

  constructor(private readonly bus: NatsBus) {}

  /** Calls `listener` with each message on `subject` (parsed, or UNPARSED); returns the release. */
  listen(subject: string, listener: Listener): () => void {
    let entry = this.shared.get(subject);
    if (!entry) {
      const listeners = new Set<Listener>();
      const subscription = this.bus.nc.subscribe(subject, {
        callback: (error, msg) => {
          if (error) return;
          let message: SharedMessage = UNPARSED;
          try {
            message = msg.json<unknown>();
          } catch {
            // Not JSON: delivered as UNPARSED.
          }
          for (const each of [...listeners]) this.deliver(subject, each, message);
        },
      });
      entry = { subscription, listeners };
      this.shared.set(subject, entry);
    }
    const held = entry;
    held.listeners.add(listener);
    return () => {
      if (!held.listeners.delete(listener) || held.listeners.size > 0) return;
      held.subscription.unsubscribe();
      if (this.shared.get(subject) === held) this.shared.delete(subject);
    };
  }

  /** Subjects with a subscription now (for tests and diagnostics). */
  get size(): number {
    return this.shared.size;
  }

  /** A listener that throws must not keep the message from the others, nor end the subscription. */
  private deliver(subject: string, listener: Listener, message: SharedMessage): void {
    try {
      listener(message);
    } catch (error) {
      this.log.warn(`A listener of ${subject} failed: ${(error as Error).message}`);
    }
  }
}
