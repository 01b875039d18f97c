import { Module } from '@nestjs/common';
import type { EdgeConfig } from '../config.js';
import { EDGE_CONFIG } from '../common/tokens.js';
import { FilesModule } from '../files/files.module.js';
import { SessionUpdatesService } from '../updates/session-updates.service.js';
import { UpdatesModule } from '../updates/updates.module.js';
import {
  SESSION_CHANGE_SINK,
  SESSIONS_OPTIONS,
  SessionsService,
  type SessionsOptions,
} from './sessions.service.js';

@Module({
  imports: [UpdatesModule, FilesModule],
  providers: [
    {
      provide: SESSIONS_OPTIONS,
      inject: [EDGE_CONFIG],
      useFactory: (config: EdgeConfig): SessionsOptions => ({
        homeDir: config.homeDir,
        unsupportedUser: process.getuid?.() === 0 && !config.allowRoot,
        dataDir: config.dataDir,
      }),
    },
    { provide: SESSION_CHANGE_SINK, useExisting: SessionUpdatesService },
    SessionsService,
  ],
  exports: [SessionsService],
})
export class SessionsModule {}
