import { Module } from '@nestjs/common';
import { ConnectorsModule } from '../connectors/connectors.module.js';
import { AccessesHandler } from './accesses.handler.js';
import { AccessesRepository } from './accesses.repository.js';
import { AccessesService } from './accesses.service.js';

@Module({
  imports: [ConnectorsModule],
  controllers: [AccessesHandler],
  providers: [AccessesRepository, AccessesService],
  exports: [AccessesRepository],
})
export class AccessesModule {}
