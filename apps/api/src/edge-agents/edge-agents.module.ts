import { Module } from '@nestjs/common';
import { AuditRefusalFilter } from './audit-refusal.filter.js';
import { AuditPublisher } from './audit.publisher.js';
import { EdgeAgentsController } from './edge-agents.controller.js';
import { EdgeAgentsService } from './edge-agents.service.js';

@Module({
  controllers: [EdgeAgentsController],
  providers: [EdgeAgentsService, AuditPublisher, AuditRefusalFilter],
})
export class EdgeAgentsModule {}
