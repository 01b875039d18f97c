import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  requestSchemas,
  type ConnectorDeleteReply,
  type ConnectorEnrollReply,
  type ConnectorListReply,
  type EdgeCredentialReply,
} from '#contracts';
import { parsePayload } from '#messaging';
import { ConnectorsService } from './connectors.service.js';

@Controller()
export class ConnectorsHandler {
  constructor(private readonly connectors: ConnectorsService) {}

  @MessagePattern('historyConnectorList')
  list(@Payload() payload: unknown): Promise<ConnectorListReply> {
    return this.connectors.list(
      parsePayload('historyConnectorList', requestSchemas.historyConnectorList, payload),
    );
  }

  @MessagePattern('historyConnectorEnroll')
  enroll(@Payload() payload: unknown): Promise<ConnectorEnrollReply> {
    const request = parsePayload('historyConnectorEnroll', requestSchemas.historyConnectorEnroll, payload);
    return this.connectors.enroll(request);
  }

  @MessagePattern('historyConnectorRotate')
  rotate(@Payload() payload: unknown): Promise<ConnectorEnrollReply> {
    const request = parsePayload('historyConnectorRotate', requestSchemas.historyConnectorRotate, payload);
    return this.connectors.rotate(request.actor_id, request.edge_id);
  }

  @MessagePattern('historyConnectorDelete')
  remove(@Payload() payload: unknown): Promise<ConnectorDeleteReply> {
    const request = parsePayload('historyConnectorDelete', requestSchemas.historyConnectorDelete, payload);
    return this.connectors.delete(request.actor_id, request.edge_id);
  }

  @MessagePattern('historyEdgeCredential')
  credential(@Payload() payload: unknown): Promise<EdgeCredentialReply> {
    const request = parsePayload('historyEdgeCredential', requestSchemas.historyEdgeCredential, payload);
    return this.connectors.credential(request.edge_id);
  }
}
