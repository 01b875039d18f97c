import { Controller } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type SessionUpdateAck } from '#contracts';
import { InvalidPayloadError, NatsRequestContext, parsePayload, NatsBus } from '#messaging';
import { JournalSequencerService } from './journal-sequencer.service.js';

@Controller()
export class JournalSequencerHandler {
  constructor(
    private readonly bus: NatsBus,
    private readonly service: JournalSequencerService,
  ) {}

  @MessagePattern('routerSessionUpdate')
  record(@Payload() payload: unknown, @Ctx() context: NatsRequestContext): Promise<SessionUpdateAck> {
    const update = parsePayload(context.subject, requestSchemas.routerSessionUpdate, payload);
    // Each edge sends on its own subject (NATS permissions hold it there): an update naming
    // another edge is forged, whatever token it carries.
    if (this.bus.subjects.edgeIdOfSubject(context.subject) !== update.edge_id) {
      throw new InvalidPayloadError(context.subject, 'edge_id does not match the subject');
    }
    return this.service.record(update);
  }
}
