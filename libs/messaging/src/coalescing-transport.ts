import { NodeTransport } from '@nats-io/transport-node/lib/node_transport.js';

/**
 * The NATS client's Node transport, with every frame the client hands it during one turn of the
 * event loop written to the socket in one `writev`.
 *
 * The client flushes its outbound buffer once per microtask checkpoint, so a process serving many
 * requests at once wrote once per request it answered and once per request it made. On loopback
 * each write also runs the reader's side of TCP, in the writer's CPU time, and wakes the reader:
 * in the B1 relay benchmark socket writes were the largest single cost of every hop
 * (docs/benchmarks.md). Holding the frames until the event loop's check phase (`setImmediate`,
 * after the I/O callbacks of the same turn) lets the replies and requests of one turn share a
 * write; a lone frame waits only for the rest of its turn.
 *
 * `close` and `disconnect` write what is queued first, so nothing the client sent before closing
 * is dropped. A socket that fails loses its queued frames, as it loses frames the kernel had not
 * sent; the client notices the failure as before.
 */
export class CoalescingTransport extends NodeTransport {
  private queued: Uint8Array[] = [];

  override send(frame: Uint8Array): void {
    if (this.queued.length === 0) setImmediate(() => this.writeQueued());
    this.queued.push(frame);
  }

  override close(err?: Error): Promise<void> {
    this.writeQueued();
    return super.close(err);
  }

  override disconnect(): void {
    this.writeQueued();
    super.disconnect();
  }

  private writeQueued(): void {
    const frames = this.queued;
    if (frames.length === 0) return;
    this.queued = [];
    const socket = this.isClosed ? undefined : this.socket;
    socket?.cork();
    for (const frame of frames) super.send(frame);
    socket?.uncork();
  }
}
