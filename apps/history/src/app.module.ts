import { Module, type DynamicModule } from '@nestjs/common';
import { PersistenceModule } from '#persistence';
import { AccessesModule } from './accesses/accesses.module.js';
import { ArchiveModule } from './archive/archive.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthorizeModule } from './authorize/authorize.module.js';
import { CoreModule, type HistoryRuntime } from './common/core.module.js';
import { ConnectorsModule } from './connectors/connectors.module.js';
import { JournalModule } from './journal/journal.module.js';
import { JournalPagesModule } from './journal-pages/journal-pages.module.js';
import { SessionsModule } from './sessions/sessions.module.js';
import { SubmissionsModule } from './submissions/submissions.module.js';

@Module({})
export class AppModule {
  static register(runtime: HistoryRuntime): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.register(runtime),
        PersistenceModule.forRoot({
          databaseUrl: runtime.config.databaseUrl,
          maxConnections: runtime.config.databasePools.prisma,
        }),
        ConnectorsModule,
        AccessesModule,
        AuthorizeModule,
        SessionsModule,
        ArchiveModule,
        JournalModule,
        JournalPagesModule,
        SubmissionsModule,
        AuditModule,
      ],
    };
  }
}
