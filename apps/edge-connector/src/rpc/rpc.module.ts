import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module.js';
import { EdgeRpcHandler } from './edge-rpc.handler.js';

@Module({ imports: [SessionsModule], providers: [EdgeRpcHandler], exports: [EdgeRpcHandler] })
export class RpcModule {}
