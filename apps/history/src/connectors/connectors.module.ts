import { Module } from '@nestjs/common';
import { ConnectorsHandler } from './connectors.handler.js';
import { ConnectorsRepository } from './connectors.repository.js';
import { ConnectorsService } from './connectors.service.js';
import { EdgeAuthority } from './edge-authority.js';
import { GrantsNotifier } from './grants-notifier.js';

@Module({
  controllers: [ConnectorsHandler],
  providers: [ConnectorsRepository, ConnectorsService, GrantsNotifier, EdgeAuthority],
  exports: [ConnectorsService, GrantsNotifier],
})
export class ConnectorsModule {}
