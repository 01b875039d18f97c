import { Module } from '@nestjs/common';
import { SessionUpdateModule } from '../session-update/session-update.module.js';
import { OperationLedgerRepository } from './operation-ledger.repository.js';
import { OperationsService } from './operations.service.js';
import { PromptRepository } from './prompt.repository.js';
import { SubmissionReconciler } from './submission-reconciler.service.js';

@Module({
  imports: [SessionUpdateModule],
  providers: [OperationsService, OperationLedgerRepository, PromptRepository, SubmissionReconciler],
  exports: [OperationsService, SubmissionReconciler],
})
export class OperationsModule {}
