import { Module } from '@nestjs/common';
import { JournalStreams } from './journal-streams.js';
import { SessionsController } from './sessions.controller.js';
import { SessionsService } from './sessions.service.js';
import { SharedSubscriptions } from './shared-subscriptions.js';

@Module({
  controllers: [SessionsController],
  providers: [SessionsService, JournalStreams, SharedSubscriptions],
})
export class SessionsModule {}
