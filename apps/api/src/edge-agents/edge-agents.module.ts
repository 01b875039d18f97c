import { Module } from '@nestjs/common';
import { EdgeAgentsController } from './edge-agents.controller.js';
import { EdgeAgentsService } from './edge-agents.service.js';

@Module({
  controllers: [EdgeAgentsController],
  providers: [EdgeAgentsService],
})
export class EdgeAgentsModule {}
