import { Module } from '@nestjs/common';
import { JournalPagesHandler } from './journal-pages.handler.js';
import { JournalPagesRepository } from './journal-pages.repository.js';
import { JournalPagesService } from './journal-pages.service.js';

@Module({
  controllers: [JournalPagesHandler],
  providers: [JournalPagesRepository, JournalPagesService],
})
export class JournalPagesModule {}
