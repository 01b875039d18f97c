import { connect, type NatsConnection } from '@nats-io/transport-node';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

export interface NatsConnectOptions {
  servers: string;
  name: string;
  user?: string;
  pass?: string;
  token?: string;
}

/**
 * One connection per process. `noAsyncTraces` drops the stack capture the client does on every
 * request (measured on the poll hot path, docs/benchmarks.md); reconnects never give up,
 * because a service that loses NATS has nothing else to do but get it back.
 */
export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  return connect({
    servers: options.servers.split(','),
    name: options.name,
    user: options.user,
    pass: options.pass,
    token: options.token,
    noAsyncTraces: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    timeout: 5_000,
  });
}
