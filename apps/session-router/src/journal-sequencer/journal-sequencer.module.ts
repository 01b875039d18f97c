import { Module } from '@nestjs/common';
import { JournalStream } from './journal-stream.js';
import { RuntimeFenceRepository } from './runtime-fence.repository.js';
import { JournalSequencerHandler } from './journal-sequencer.handler.js';
import { JournalAppendLock } from './journal-append-lock.js';
import { JournaledSnapshots } from './journaled-snapshots.js';
import { JournalSequencerRepository } from './journal-sequencer.repository.js';
import { JournalSequencerService } from './journal-sequencer.service.js';

@Module({
  controllers: [JournalSequencerHandler],
  providers: [
    JournalStream,
    JournalAppendLock,
    JournaledSnapshots,
    JournalSequencerRepository,
    JournalSequencerService,
    RuntimeFenceRepository,
  ],
  exports: [JournalStream, JournalSequencerRepository, JournalSequencerService, JournaledSnapshots],
})
export class JournalSequencerModule {}
