import { Injectable } from '@nestjs/common';
import { isOperationAction, result, type EdgeAgentResult, type RouterEdgeAgentRequest } from '#contracts';
import { OperationsService } from '../operations/operations.service.js';
import { withoutEnvelope } from '../operations/operation-rules.js';
import { RouterPath } from './router-path.service.js';

/** Routes one authorized action to its edge, with the router's own parts (watch, sessions, leases). */
@Injectable()
export class EdgeAgentService {
  constructor(
    private readonly path: RouterPath,
    private readonly operations: OperationsService,
  ) {}

  async route(command: RouterEdgeAgentRequest): Promise<EdgeAgentResult> {
    const { request } = command;
    // `expire` is the reaper's own action; nobody outside the router may send it.
    if (request.action === 'expire') return result('invalid_request');
    // The mutation envelope: admitted, run once and replayed by the operation ledger.
    if (isOperationAction(request.action) && OperationsService.applies(request)) {
      return this.operations.route(command, request.action);
    }
    const reply = await this.path.forward(command, withoutEnvelope(request));
    await this.operations.noteRuntime(command, reply);
    return reply;
  }
}
