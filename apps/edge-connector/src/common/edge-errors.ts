import type { EdgeAgentStatus } from '#contracts';

/**
 * An action that ends with a contract status instead of a snapshot. The RPC handler turns it
 * into `{version, status}`; the message is for logs and tests, never sent.
 */
export class EdgeStatusError extends Error {
  constructor(
    readonly status: Exclude<EdgeAgentStatus, 'ok'>,
    message: string,
  ) {
    super(message);
    this.name = 'EdgeStatusError';
  }
}
