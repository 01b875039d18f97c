import { Controller, Inject } from '@nestjs/common';
import { Ctx, MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type SessionUpdateAck, type Subjects } from '#contracts';
import { InvalidPayloadError, NatsRequestContext, parsePayload } from '#messaging';
import { SUBJECTS } from '../common/tokens.js';
import { JournalSequencerService } from './journal-sequencer.service.js';

@Controller()
export class JournalSequencerHandler {
  constructor(
    @Inject(SUBJECTS) private readonly subjects: Subjects,
    private readonly service: JournalSequencerService,
  ) {}

  @MessagePattern('routerSessionUpdate')
  record(@Payload() payload: unknown, @Ctx() context: NatsRequestContext): Promise<SessionUpdateAck> {
    const update = parsePayload(context.subject, requestSchemas.routerSessionUpdate, payload);
    // Each edge sends on its own subject (NATS permissions hold it there): an update naming
    // another edge is forged, whatever token it carries.
    if (this.subjects.edgeIdOfSubject(context.subject) !== update.edge_id) {
      throw new InvalidPayloadError(context.subject, 'edge_id does not match the subject');
    }
    return this.service.record(update);
  }
}
