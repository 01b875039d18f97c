import { z } from 'zod';
import { readableFileVar } from './optional-vars.js';

/**
 * How a process reaches NATS: every service and the edge read the same variables, so one
 * deployment recipe (seed URLs, credentials, TLS) serves them all.
 */
export interface NatsSettings {
  /** Seed URLs; the client learns the rest of a cluster from the first server it reaches. */
  servers: string[];
  /** A NATS `.creds` file (user JWT + nkey seed); absent: no credentials (an open dev NATS). */
  credsFile?: string;
  /** Absent: TLS only where a URL asks for it (`tls://`). */
  tls?: NatsTlsSettings;
}

export interface NatsTlsSettings {
  /** CA bundle that signed the servers' certificates; absent: the system's trust store. */
  caFile?: string;
  /** Client certificate and its key (mutual TLS); always both or neither. */
  certFile?: string;
  keyFile?: string;
}

const NATS_SERVER_URL = /^(nats|tls|ws|wss):\/\/[^\s,]+$/;

/** Comma-separated seed URLs, as TETHER_NATS_URL has always been. */
export const natsUrlVar = () =>
  z
    .string()
    .default('nats://127.0.0.1:4222')
    .refine(
      (value) =>
        splitServers(value).length > 0 && splitServers(value).every((url) => NATS_SERVER_URL.test(url)),
      'must be a comma-separated list of nats://, tls://, ws:// or wss:// URLs',
    );

function splitServers(value: string): string[] {
  return value
    .split(',')
    .map((server) => server.trim())
    .filter(Boolean);
}

/**
 * The zod fragment every service's env schema spreads in (`z.object({ ...natsEnv, ... })`),
 * followed by `.superRefine(checkNatsEnv)`; `natsSettings(env)` turns the result into settings.
 */
export const natsEnv = {
  TETHER_NATS_URL: natsUrlVar(),
  TETHER_NATS_CREDS: readableFileVar(),
  TETHER_NATS_TLS_CA: readableFileVar(),
  TETHER_NATS_TLS_CERT: readableFileVar(),
  TETHER_NATS_TLS_KEY: readableFileVar(),
};

export interface NatsEnv {
  TETHER_NATS_URL: string;
  TETHER_NATS_CREDS?: string;
  TETHER_NATS_TLS_CA?: string;
  TETHER_NATS_TLS_CERT?: string;
  TETHER_NATS_TLS_KEY?: string;
}

/** A client certificate without its key (or the reverse) cannot authenticate: refuse at boot. */
export function checkNatsEnv(env: NatsEnv, ctx: z.RefinementCtx): void {
  const cert = env.TETHER_NATS_TLS_CERT !== undefined;
  const key = env.TETHER_NATS_TLS_KEY !== undefined;
  if (cert === key) return;
  ctx.addIssue({
    code: 'custom',
    path: [cert ? 'TETHER_NATS_TLS_KEY' : 'TETHER_NATS_TLS_CERT'],
    message: 'TETHER_NATS_TLS_CERT and TETHER_NATS_TLS_KEY are set together or not at all',
  });
}

export function natsSettings(env: NatsEnv): NatsSettings {
  const tls: NatsTlsSettings = {
    ...(env.TETHER_NATS_TLS_CA && { caFile: env.TETHER_NATS_TLS_CA }),
    ...(env.TETHER_NATS_TLS_CERT && { certFile: env.TETHER_NATS_TLS_CERT }),
    ...(env.TETHER_NATS_TLS_KEY && { keyFile: env.TETHER_NATS_TLS_KEY }),
  };
  return {
    servers: splitServers(env.TETHER_NATS_URL),
    ...(env.TETHER_NATS_CREDS && { credsFile: env.TETHER_NATS_CREDS }),
    ...(Object.keys(tls).length > 0 && { tls }),
  };
}

/** Settings for a plain URL list (tests, tools): no credentials, no TLS beyond `tls://`. */
export function natsSettingsFromUrl(url: string): NatsSettings {
  return { servers: splitServers(url) };
}
