import { Module } from '@nestjs/common';
import { LeasesModule } from '../leases/leases.module.js';
import { OperationsModule } from '../operations/operations.module.js';
import { SessionUpdateModule } from '../session-update/session-update.module.js';
import { WatchModule } from '../watch/watch.module.js';
import { EdgeAgentHandler } from './edge-agent.handler.js';
import { EdgeAgentService } from './edge-agent.service.js';
import { StoredSessionsService } from './stored-sessions.service.js';
import { TitleOverrideRepository } from './title-override.repository.js';

@Module({
  imports: [WatchModule, LeasesModule, OperationsModule, SessionUpdateModule],
  controllers: [EdgeAgentHandler],
  providers: [EdgeAgentService, StoredSessionsService, TitleOverrideRepository],
})
export class EdgeAgentModule {}
