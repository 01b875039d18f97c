import {
  Global,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { JournalCipher, NatsBus } from '#messaging';
import type { HistoryConfig } from '../config.js';
import { HistoryCipher } from './history-cipher.js';
import { HISTORY_CONFIG } from './tokens.js';

/**
 * Drains the connection last: the transport has stopped its subscriptions and finished in-flight
 * handlers, and the journal consumer has stopped, before any onApplicationShutdown hook runs;
 * draining flushes their last replies and acks.
 */
@Injectable()
export class NatsLifecycle implements OnApplicationShutdown {
  private readonly log = new Logger(NatsLifecycle.name);

  constructor(private readonly bus: NatsBus) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.bus.nc.isClosed()) return;
    await this.bus.nc.drain();
    this.log.log('NATS connection drained.');
  }
}

export interface HistoryRuntime {
  config: HistoryConfig;
  nc: NatsConnection;
  subjects: Subjects;
}

/** What every context shares: config, the NATS connection, its subjects and the history cipher. */
@Global()
@Module({})
export class CoreModule {
  static register(runtime: HistoryRuntime): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: HISTORY_CONFIG, useValue: runtime.config },
        { provide: NatsBus, useValue: new NatsBus(runtime.nc, runtime.subjects) },
        { provide: HistoryCipher, useValue: new HistoryCipher(runtime.config.historyKey) },
        {
          provide: JournalCipher,
          useValue: new JournalCipher(
            runtime.config.journalKeys.current,
            runtime.config.journalKeys.previous,
          ),
        },
        NatsLifecycle,
      ],
      exports: [HISTORY_CONFIG, NatsBus, HistoryCipher, JournalCipher],
    };
  }
}
