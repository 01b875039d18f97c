import { Injectable } from '@nestjs/common';
import { Limits, type RequestMap, type RequestName, type RequestOf } from '#contracts';
import { requestService, NatsBus } from '#messaging';

type HistoryRequest = Extract<RequestName, `history${string}`>;

/** The router's requests to history: database work only, so the short history timeout. */
@Injectable()
export class HistoryClient {
  constructor(private readonly bus: NatsBus) {}

  call<N extends HistoryRequest>(name: N, payload: RequestOf<N>): Promise<RequestMap[N][1]> {
    return requestService(this.bus.nc, this.bus.subjects, name, payload, {
      timeoutMs: Limits.HISTORY_RPC_TIMEOUT_MS,
    });
  }
}
