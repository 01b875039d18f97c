import { Module } from '@nestjs/common';
import { OperationsModule } from '../operations/operations.module.js';
import { EdgeAgentHandler } from './edge-agent.handler.js';
import { EdgeAgentService } from './edge-agent.service.js';
import { RouterPathModule } from './router-path.module.js';

@Module({
  imports: [RouterPathModule, OperationsModule],
  controllers: [EdgeAgentHandler],
  providers: [EdgeAgentService],
})
export class EdgeAgentModule {}
