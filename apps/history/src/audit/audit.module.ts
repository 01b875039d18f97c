import { Module } from '@nestjs/common';
import { AuditConsumer } from './audit.consumer.js';
import { AuditRepository } from './audit.repository.js';

@Module({
  providers: [AuditRepository, AuditConsumer],
})
export class AuditModule {}
