import { Module } from '@nestjs/common';
import { AccessesModule } from '../accesses/accesses.module.js';
import { ConnectorsModule } from '../connectors/connectors.module.js';
import { AuthorizeHandler } from './authorize.handler.js';
import { AuthorizeService } from './authorize.service.js';

@Module({
  imports: [AccessesModule, ConnectorsModule],
  controllers: [AuthorizeHandler],
  providers: [AuthorizeService],
})
export class AuthorizeModule {}
