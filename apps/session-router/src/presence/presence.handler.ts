import { Controller, Logger } from '@nestjs/common';
import { Ctx, EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import {
  bootIdOf,
  EDGE_BOOT_ID_HEADER,
  heartbeatSchema,
  requestSchemas,
  type PresenceReply,
} from '#contracts';
import { parsePayload, type NatsRequestContext, NatsBus } from '#messaging';
import { PresenceService } from './presence.service.js';

@Controller()
export class PresenceHandler {
  private readonly log = new Logger(PresenceHandler.name);

  constructor(
    private readonly bus: NatsBus,
    private readonly service: PresenceService,
  ) {}

  /** Published by every edge; the queue group makes one replica record each heartbeat. */
  @EventPattern('edgeHeartbeat')
  // Nest types an event handler's extra arguments as unknown; the transport passes its context.
  async heartbeat(@Payload() payload: unknown, @Ctx() ctx: unknown): Promise<void> {
    const context = ctx as NatsRequestContext;
    try {
      const heartbeat = parsePayload(context.subject, heartbeatSchema, payload);
      // Each edge publishes on its own subject (NATS permissions hold it there): a heartbeat
      // naming another edge is forged.
      if (this.bus.subjects.edgeIdOfSubject(context.subject) !== heartbeat.edge_id) {
        this.log.warn(`Heartbeat on ${context.subject} refused: it names another edge.`);
        return;
      }
      await this.service.heartbeat(heartbeat, bootIdOf(context.headers?.get(EDGE_BOOT_ID_HEADER)));
    } catch (error) {
      // An event has nobody to answer; a bad heartbeat is only worth a line.
      this.log.warn(`Heartbeat not recorded: ${(error as Error).message}`);
    }
  }

  @MessagePattern('routerPresence')
  online(@Payload() payload: unknown): Promise<PresenceReply> {
    const request = parsePayload(
      this.bus.subjects.requests.routerPresence,
      requestSchemas.routerPresence,
      payload,
    );
    return this.service.online(request.edge_ids);
  }
}
