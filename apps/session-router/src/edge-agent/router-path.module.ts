import { Module } from '@nestjs/common';
import { LeasesModule } from '../leases/leases.module.js';
import { JournalSequencerModule } from '../journal-sequencer/journal-sequencer.module.js';
import { WatchModule } from '../watch/watch.module.js';
import { RouterPath } from './router-path.service.js';
import { StoredSessionsService } from './stored-sessions.service.js';
import { TitleOverrideRepository } from './title-override.repository.js';
import { TitleOverrides } from './title-overrides.js';

/** The path of a request to its edge; the operations context dispatches through it too. */
@Module({
  imports: [WatchModule, LeasesModule, JournalSequencerModule],
  providers: [RouterPath, StoredSessionsService, TitleOverrideRepository, TitleOverrides],
  exports: [RouterPath],
})
export class RouterPathModule {}
