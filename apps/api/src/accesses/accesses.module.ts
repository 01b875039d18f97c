import { Module } from '@nestjs/common';
import { AccessesController } from './accesses.controller.js';
import { AccessesService } from './accesses.service.js';

@Module({
  controllers: [AccessesController],
  providers: [AccessesService],
})
export class AccessesModule {}
