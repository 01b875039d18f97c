import { Module } from '@nestjs/common';
import { AuthorizeHandler } from './authorize.handler.js';
import { AuthorizeRepository } from './authorize.repository.js';
import { AuthorizeService } from './authorize.service.js';

@Module({
  controllers: [AuthorizeHandler],
  providers: [AuthorizeService, AuthorizeRepository],
})
export class AuthorizeModule {}
