import { Inject, Injectable } from '@nestjs/common';
import type { DispatchState, HistoryOpenSubmissionsRequest, OpenSubmission } from '#contracts';
import { PRISMA, PrismaClient } from '#persistence';

/**
 * Open submissions across every stored session, for the router's crash-boundary sweep and its
 * reconciler. Served by the `(dispatch_state, submitted_at)` index: only open rows are read, so
 * the cost does not grow with the settled history.
 */
@Injectable()
export class OpenSubmissionsRepository {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {}

  async list(request: HistoryOpenSubmissionsRequest): Promise<OpenSubmission[]> {
    const after = request.after;
    const rows = await this.db.journalSubmission.findMany({
      where: {
        dispatchState: request.dispatch_state,
        submittedAt: {
          ...(request.submitted_from !== undefined ? { gte: new Date(request.submitted_from) } : {}),
          ...(request.submitted_before !== undefined ? { lt: new Date(request.submitted_before) } : {}),
        },
        ...(after
          ? {
              OR: [
                { submittedAt: { gt: new Date(after.submitted_at) } },
                { submittedAt: new Date(after.submitted_at), sessionId: { gt: after.session_id } },
                {
                  submittedAt: new Date(after.submitted_at),
                  sessionId: after.session_id,
                  clientMessageId: { gt: after.client_message_id },
                },
              ],
            }
          : {}),
      },
      orderBy: [{ submittedAt: 'asc' }, { sessionId: 'asc' }, { clientMessageId: 'asc' }],
      take: request.limit,
    });
    return rows.map((row) => ({
      session_id: row.sessionId,
      edge_id: row.edgeId.toString(),
      actor_id: row.ownerId,
      access_id: row.accessId,
      submission: {
        client_message_id: row.clientMessageId,
        fence: row.fence,
        payload_fingerprint: row.payloadFingerprint,
        dispatch_state: row.dispatchState as DispatchState,
        ...(row.reason !== null ? { reason: row.reason } : {}),
        ...(row.itemId !== null ? { item_id: row.itemId } : {}),
        submitted_at: row.submittedAt.getTime(),
        ...(row.resolvedAt !== null ? { resolved_at: row.resolvedAt.getTime() } : {}),
      },
    }));
  }
}
