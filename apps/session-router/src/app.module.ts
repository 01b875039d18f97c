import { Module, type DynamicModule } from '@nestjs/common';
import { CoreModule, type RouterRuntime } from './common/core.module.js';
import { EdgeAgentModule } from './edge-agent/edge-agent.module.js';
import { HeartbeatModule } from './heartbeat/heartbeat.module.js';
import { LeasesModule } from './leases/leases.module.js';
import { PresenceModule } from './presence/presence.module.js';
import { JournalSequencerModule } from './journal-sequencer/journal-sequencer.module.js';
import { WatchModule } from './watch/watch.module.js';

@Module({})
export class AppModule {
  static register(runtime: RouterRuntime): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.register(runtime),
        WatchModule,
        LeasesModule,
        EdgeAgentModule,
        JournalSequencerModule,
        PresenceModule,
        HeartbeatModule,
      ],
    };
  }
}
