import { Controller, Inject, Logger } from '@nestjs/common';
import { EventPattern, MessagePattern, Payload } from '@nestjs/microservices';
import { heartbeatSchema, requestSchemas, type PresenceReply, type Subjects } from '#contracts';
import { parsePayload } from '#messaging';
import { SUBJECTS } from '../common/tokens.js';
import { PresenceService } from './presence.service.js';

@Controller()
export class PresenceHandler {
  private readonly log = new Logger(PresenceHandler.name);

  constructor(
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly service: PresenceService,
  ) {}

  /** Published by every edge; the queue group makes one replica record each heartbeat. */
  @EventPattern('edgeHeartbeat')
  async heartbeat(@Payload() payload: unknown): Promise<void> {
    try {
      await this.service.heartbeat(parsePayload(this.subjects.edgeHeartbeat, heartbeatSchema, payload));
    } catch (error) {
      // An event has nobody to answer; a bad heartbeat is only worth a line.
      this.log.warn(`Heartbeat not recorded: ${(error as Error).message}`);
    }
  }

  @MessagePattern('routerPresence')
  online(@Payload() payload: unknown): Promise<PresenceReply> {
    const request = parsePayload(
      this.subjects.requests.routerPresence,
      requestSchemas.routerPresence,
      payload,
    );
    return this.service.online(request.edge_ids);
  }
}
