import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type HistoryJournalPageReply } from '#contracts';
import { parsePayload } from '#messaging';
import { JournalPagesService } from './journal-pages.service.js';

@Controller()
export class JournalPagesHandler {
  constructor(private readonly pages: JournalPagesService) {}

  @MessagePattern('historyJournalPage')
  page(@Payload() payload: unknown): Promise<HistoryJournalPageReply> {
    return this.pages.page(parsePayload('historyJournalPage', requestSchemas.historyJournalPage, payload));
  }
}
