import { Module } from '@nestjs/common';
import { RouterHeartbeatService } from './router-heartbeat.service.js';

@Module({ providers: [RouterHeartbeatService] })
export class HeartbeatModule {}
