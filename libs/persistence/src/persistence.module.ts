import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createPrismaClient, PrismaClient, type PrismaOptions } from './prisma-client.js';

/** Injection token of the process's PrismaClient: `@Inject(PRISMA) db: PrismaClient`. */
export const PRISMA = Symbol('PRISMA');

/**
 * Closes the pool after everything else stopped: Nest runs onApplicationShutdown after every
 * onModuleDestroy/beforeApplicationShutdown hook, so consumers and handlers have finished
 * their last writes by then.
 */
@Injectable()
export class PrismaLifecycle implements OnApplicationShutdown {
  private readonly log = new Logger(PrismaLifecycle.name);

  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async onApplicationShutdown(): Promise<void> {
    await this.prisma.$disconnect();
    this.log.log('Database connections closed.');
  }
}

/** Connection errors nobody waits on become a warning of the process's own. */
function withLogging(options: PrismaOptions): PrismaOptions {
  if (options.onConnectionError) return options;
  const log = new Logger('Database');
  return {
    ...options,
    onConnectionError: (error) => log.warn(`Pooled connection lost: ${error.message}`),
  };
}

@Global()
@Module({})
export class PersistenceModule {
  static forRoot(options: PrismaOptions): DynamicModule {
    return {
      module: PersistenceModule,
      providers: [
        { provide: PRISMA, useFactory: () => createPrismaClient(withLogging(options)) },
        PrismaLifecycle,
      ],
      exports: [PRISMA],
    };
  }
}
