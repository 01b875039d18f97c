import { Module } from '@nestjs/common';
import { ConsoleController } from './console.controller.js';
import { ConsoleService } from './console.service.js';

@Module({
  controllers: [ConsoleController],
  providers: [ConsoleService],
})
export class ConsoleModule {}
