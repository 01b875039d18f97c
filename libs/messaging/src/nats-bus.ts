import type { NatsConnection } from '@nats-io/transport-node';
import type { Subjects } from '#contracts';

/**
 * What a service needs to speak over NATS: the process's one connection and the subjects of its
 * namespace. Every publisher, requester and consumer needs both, so a Nest app provides them as
 * one dependency, injected by class (no token), built once at boot by whoever owns the
 * connection (and closes it).
 */
export class NatsBus {
  constructor(
    readonly nc: NatsConnection,
    readonly subjects: Subjects,
  ) {}
}
