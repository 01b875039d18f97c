import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';
import { NatsBus } from '#messaging';
import { AccessesModule } from './accesses/accesses.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ApiExceptionFilter } from './common/api-exception.filter.js';
import { Authorizer } from './common/authorizer.js';
import { EnvelopeInterceptor } from './common/envelope.interceptor.js';
import { RouterReplicas } from './common/router-replicas.js';
import { ServiceClient } from './common/service-client.js';
import { API_CONFIG } from './common/tokens.js';
import type { ApiConfig } from './config.js';
import { ConsoleModule } from './console/console.module.js';
import { ConnectorsModule } from './connectors/connectors.module.js';
import { EdgeAgentsModule } from './edge-agents/edge-agents.module.js';
import { LimitsModule } from './limits/limits.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { SessionsModule } from './sessions/sessions.module.js';

export interface ApiDependencies {
  config: ApiConfig;
  nc: NatsConnection;
  subjects: Subjects;
}

@Module({})
export class AppModule {
  /** The whole api over a NATS connection the caller owns (and closes). */
  static register({ config, nc, subjects }: ApiDependencies): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        LimitsModule,
        AuthModule,
        EdgeAgentsModule,
        AccessesModule,
        ConnectorsModule,
        ConsoleModule,
        OpenApiModule,
        SessionsModule,
      ],
      providers: [
        { provide: API_CONFIG, useValue: config },
        { provide: NatsBus, useValue: new NatsBus(nc, subjects) },
        RouterReplicas,
        ServiceClient,
        Authorizer,
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor },
      ],
      exports: [API_CONFIG, NatsBus, ServiceClient, Authorizer],
    };
  }
}
