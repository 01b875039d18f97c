import { Module } from '@nestjs/common';
import { JournalConsumer } from './journal.consumer.js';
import { JournalRepository } from './journal.repository.js';
import { JournalService } from './journal.service.js';

@Module({
  providers: [JournalRepository, JournalService, JournalConsumer],
})
export class JournalModule {}
