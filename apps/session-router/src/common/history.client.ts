import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { Limits, type RequestMap, type RequestName, type RequestOf, type Subjects } from '#contracts';
import { NATS_CONNECTION, requestService } from '#messaging';
import { SUBJECTS } from './tokens.js';

type HistoryRequest = Extract<RequestName, `history${string}`>;

/** The router's requests to history: database work only, so the short history timeout. */
@Injectable()
export class HistoryClient {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(SUBJECTS) private readonly subjects: Subjects,
  ) {}

  call<N extends HistoryRequest>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]> {
    return requestService(this.nc, this.subjects, name, payload, {
      timeoutMs: Limits.HISTORY_RPC_TIMEOUT_MS,
    });
  }
}
