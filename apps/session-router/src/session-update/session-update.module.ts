import { Module } from '@nestjs/common';
import { JournalStream } from './journal-stream.js';
import { RuntimeFenceRepository } from './runtime-fence.repository.js';
import { SessionUpdateHandler } from './session-update.handler.js';
import { JournalAppendLock } from './journal-append-lock.js';
import { SessionUpdateRepository } from './session-update.repository.js';
import { SessionUpdateService } from './session-update.service.js';

@Module({
  controllers: [SessionUpdateHandler],
  providers: [
    JournalStream,
    JournalAppendLock,
    SessionUpdateRepository,
    SessionUpdateService,
    RuntimeFenceRepository,
  ],
  exports: [JournalStream, SessionUpdateRepository, SessionUpdateService],
})
export class SessionUpdateModule {}
