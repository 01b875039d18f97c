import { Module } from '@nestjs/common';
import { RouterPathModule } from '../edge-agent/router-path.module.js';
import { JournalSequencerModule } from '../journal-sequencer/journal-sequencer.module.js';
import { OperationDispatcher } from './operation-dispatcher.js';
import { OperationLedgerRepository } from './operation-ledger.repository.js';
import { OperationSettlement } from './operation-settlement.js';
import { OperationsService } from './operations.service.js';
import { PlainOperation } from './plain-operation.js';
import { PromptOperation } from './prompt-operation.js';
import { PromptRepository } from './prompt.repository.js';
import { SendOperation } from './send-operation.js';
import { SubmissionReconciler } from './submission-reconciler.service.js';

@Module({
  imports: [JournalSequencerModule, RouterPathModule],
  providers: [
    OperationsService,
    OperationDispatcher,
    OperationSettlement,
    SendOperation,
    PromptOperation,
    PlainOperation,
    OperationLedgerRepository,
    PromptRepository,
    SubmissionReconciler,
  ],
  exports: [OperationsService, SubmissionReconciler],
})
export class OperationsModule {}
