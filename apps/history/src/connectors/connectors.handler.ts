import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { requestSchemas, type ConnectorEnrollReply, type ConnectorListReply } from '#contracts';
import { parsePayload } from '#messaging';
import { ConnectorsService } from './connectors.service.js';

@Controller()
export class ConnectorsHandler {
  constructor(private readonly connectors: ConnectorsService) {}

  @MessagePattern('historyConnectorList')
  list(@Payload() payload: unknown): Promise<ConnectorListReply> {
    const request = parsePayload('historyConnectorList', requestSchemas.historyConnectorList, payload);
    return this.connectors.list(request.actor_id);
  }

  @MessagePattern('historyConnectorEnroll')
  enroll(@Payload() payload: unknown): Promise<ConnectorEnrollReply> {
    const request = parsePayload('historyConnectorEnroll', requestSchemas.historyConnectorEnroll, payload);
    return this.connectors.enroll(request);
  }
}
