import { Module } from '@nestjs/common';
import { ConnectorsHandler } from './connectors.handler.js';
import { ConnectorsRepository } from './connectors.repository.js';
import { ConnectorsService } from './connectors.service.js';

@Module({
  controllers: [ConnectorsHandler],
  providers: [ConnectorsRepository, ConnectorsService],
  exports: [ConnectorsService],
})
export class ConnectorsModule {}
