import { context, trace, SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import { recordTurnTiming, type TurnTimingMs } from './metrics.js';

const TRACER = 'tether.edge';

/** Span attribute names; the values equal the session's `turn_timing`. */
export const TURN_ATTR = {
  agentKind: 'tether.agent.kind',
  model: 'tether.agent.model',
  sessionId: 'tether.session.id',
  dispatchMs: 'tether.turn.dispatch_ms',
  firstReplyMs: 'tether.turn.first_reply_ms',
  finishedMs: 'tether.turn.finished_ms',
  status: 'tether.turn.status',
} as const;

/**
 * One agent turn on the edge: a span from the send to the native completion, with `dispatch`,
 * `first_reply` and `finished` events, attributes equal to `turn_timing`, and a child span per
 * approval or input wait. Its context is the parent of every session update the turn causes,
 * so the router's journal write and history's store land in the send's trace. Nothing of the
 * prompt, the output or a path is recorded.
 */
export class TurnTrace {
  private readonly span: Span;
  readonly context: Context;
  private readonly waits = new Map<string, Span>();
  private ended = false;

  constructor(
    private readonly agentKind: string,
    private readonly model: string | undefined,
    sessionId: string,
    parent: Context = context.active(),
  ) {
    this.span = trace.getTracer(TRACER).startSpan(
      'agent.turn',
      {
        attributes: {
          [TURN_ATTR.agentKind]: agentKind,
          [TURN_ATTR.model]: model ?? 'default',
          [TURN_ATTR.sessionId]: sessionId,
        },
      },
      parent,
    );
    this.context = trace.setSpan(parent, this.span);
  }

  /** Runs `fn` with this turn as the active context (its NATS requests carry the turn's trace). */
  run<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  dispatched(ms: number | null | undefined): void {
    if (ms == null || this.ended) return;
    this.span.setAttribute(TURN_ATTR.dispatchMs, ms);
    this.span.addEvent('dispatch', { [TURN_ATTR.dispatchMs]: ms });
  }

  firstReply(ms: number | null | undefined): void {
    if (ms == null || this.ended) return;
    this.span.setAttribute(TURN_ATTR.firstReplyMs, ms);
    this.span.addEvent('first_reply', { [TURN_ATTR.firstReplyMs]: ms });
  }

  /** An approval or input request started waiting for the user. */
  waitStarted(kind: 'approval' | 'input', id: string): void {
    if (this.ended || this.waits.has(id)) return;
    this.waits.set(id, trace.getTracer(TRACER).startSpan(`agent.turn.${kind}_wait`, {}, this.context));
  }

  /** The wait ended: answered, resolved natively, or dropped. */
  waitEnded(id: string): void {
    const wait = this.waits.get(id);
    if (!wait) return;
    this.waits.delete(id);
    wait.end();
  }

  /** Ends the turn with the session's final `turn_timing` and records the turn histograms. */
  finished(timing: TurnTimingMs | null, status: string): void {
    if (this.ended) return;
    this.ended = true;
    for (const id of [...this.waits.keys()]) this.waitEnded(id);
    if (timing) {
      if (timing.dispatch_ms != null) this.span.setAttribute(TURN_ATTR.dispatchMs, timing.dispatch_ms);
      if (timing.first_reply_ms != null)
        this.span.setAttribute(TURN_ATTR.firstReplyMs, timing.first_reply_ms);
      if (timing.finished_ms != null) {
        this.span.setAttribute(TURN_ATTR.finishedMs, timing.finished_ms);
        this.span.addEvent('finished', { [TURN_ATTR.finishedMs]: timing.finished_ms });
      }
      recordTurnTiming(timing, this.agentKind, this.model);
    }
    this.span.setAttribute(TURN_ATTR.status, status);
    if (status === 'failed') this.span.setStatus({ code: SpanStatusCode.ERROR, message: 'turn failed' });
    this.span.end();
  }
}
