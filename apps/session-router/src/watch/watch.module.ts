import { Module } from '@nestjs/common';
import { JournalSequencerModule } from '../journal-sequencer/journal-sequencer.module.js';
import { WatchRepository } from './watch.repository.js';
import { WatchService } from './watch.service.js';

@Module({
  imports: [JournalSequencerModule],
  providers: [WatchRepository, WatchService],
  exports: [WatchService],
})
export class WatchModule {}
