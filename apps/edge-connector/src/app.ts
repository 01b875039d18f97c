// Starts one edge: NATS, the agent driver, the Nest context that wires the modules, then the
// RPC subscription and the heartbeat. main.ts and the integration suite both use it.
import { NestFactory } from '@nestjs/core';
import type { LogLevel } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { inboxPrefix, Subjects } from '#contracts';
import { connectNats } from '#messaging';
import { createAgentDriver } from './agent/driver-registry.js';
import { AppModule } from './app.module.js';
import type { EdgeConfig } from './config.js';
import { HeartbeatService } from './heartbeat/heartbeat.service.js';
import { EdgeRpcHandler } from './rpc/edge-rpc.handler.js';
import { SessionsService } from './sessions/sessions.service.js';
import { SessionUpdatesService } from './updates/session-updates.service.js';

/** On shutdown, the final states of closed sessions get this long to reach the router. */
const SHUTDOWN_FLUSH_MS = 3_000;

const LOG_LEVELS: Record<EdgeConfig['logLevel'], LogLevel[]> = {
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  log: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  verbose: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

export interface RunningEdge {
  readonly sessions: SessionsService;
  readonly nc: NatsConnection;
  close(): Promise<void>;
}

export async function startEdge(config: EdgeConfig): Promise<RunningEdge> {
  const driver = await createAgentDriver(config);
  const subjects = new Subjects(config.namespace);
  const nc = await connectNats({
    ...config.nats,
    name: `edge-connector-${config.edgeId}`,
    inboxPrefix: inboxPrefix(subjects, 'edge', config.edgeId),
  });
  const app = await NestFactory.createApplicationContext(
    AppModule.register({ config, nc, subjects, driver }),
    {
      logger: LOG_LEVELS[config.logLevel],
    },
  );
  const sessions = app.get(SessionsService);
  const rpc = app.get(EdgeRpcHandler);
  const heartbeat = app.get(HeartbeatService);
  const updates = app.get(SessionUpdatesService);
  // Discovery first, so the first heartbeat already lists the installations.
  await sessions.refreshInstallations().catch(() => []);
  rpc.listen();
  heartbeat.start();

  let closing: Promise<void> | null = null;
  return {
    sessions,
    nc,
    close() {
      closing ??= (async () => {
        await rpc.close();
        // After the RPC subscription is gone, so no router routes a new call here meanwhile.
        heartbeat.stop(true);
        await sessions.shutdown();
        await driver.close?.();
        await updates.flush(SHUTDOWN_FLUSH_MS);
        updates.stop();
        await app.close();
        await nc.drain();
      })();
      return closing;
    },
  };
}
