import { Module } from '@nestjs/common';
import { JournalChainRepository } from './journal-chain.repository.js';
import { JournalCompactionRepository } from './journal-compaction.repository.js';
import { JournalCompactor } from './journal-compactor.service.js';
import { JournalConsumer } from './journal.consumer.js';
import { JournalRepository } from './journal.repository.js';
import { JournalService } from './journal.service.js';

@Module({
  providers: [
    JournalRepository,
    JournalChainRepository,
    JournalService,
    JournalConsumer,
    JournalCompactionRepository,
    JournalCompactor,
  ],
})
export class JournalModule {}
