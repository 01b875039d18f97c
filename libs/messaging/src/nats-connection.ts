import { readFileSync } from 'node:fs';
import { credsAuthenticator } from '@nats-io/nats-core';
import { NatsConnectionImpl, setTransportFactory } from '@nats-io/nats-core/internal';
import type { ConnectionOptions, NatsConnection } from '@nats-io/transport-node';
import { nodeResolveHost } from '@nats-io/transport-node/lib/node_transport.js';
import type { NatsSettings } from '#config';
import { CoalescingTransport } from './coalescing-transport.js';
import { RequestMux } from './request-mux.js';

export interface NatsConnectOptions extends Omit<NatsSettings, 'servers'> {
  /** Seed URLs: a list, or the comma-separated form of TETHER_NATS_URL. */
  servers: string | string[];
  /** Shows in the server's connection list (`nats server report connections`). */
  name: string;
  /**
   * Where replies to this process's requests arrive: its identity's own inbox (contracts
   * `inboxPrefix`), which its NATS permissions let it read and no other identity can.
   */
  inboxPrefix?: string;
}

/**
 * After a lost server, every client of a cluster would otherwise retry on the same beat and hit
 * the surviving nodes together: each waits reconnectTimeWait plus up to this much at random.
 * TLS handshakes cost the server more, so they are spread wider (the client's own defaults are
 * 100 ms and 1 s; a 3-node cluster with a few hundred clients wants a wider spread).
 */
const RECONNECT_WAIT_MS = 250;
const RECONNECT_JITTER_MS = 500;
const RECONNECT_JITTER_TLS_MS = 2_000;
const CONNECT_TIMEOUT_MS = 5_000;

/** A file named in the settings that cannot be read at boot; names the setting, not the path. */
export class NatsSettingsError extends Error {
  constructor(setting: string, cause: unknown) {
    super(`Cannot read the NATS ${setting} file: ${(cause as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    this.name = 'NatsSettingsError';
  }
}

function readSetting(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new NatsSettingsError(setting, error);
  }
}

/**
 * Builds the client options from the settings. The creds file and TLS material are read here,
 * once: a rotated file takes effect at the next restart, and a missing one fails the boot
 * instead of a later reconnect.
 */
export function natsConnectionOptions(options: NatsConnectOptions): ConnectionOptions {
  const servers = (typeof options.servers === 'string' ? options.servers.split(',') : options.servers)
    .map((server) => server.trim())
    .filter(Boolean);
  const creds = options.credsFile ? readSetting('credentials', options.credsFile) : undefined;
  const tls = options.tls;
  return {
    servers,
    name: options.name,
    ...(options.inboxPrefix && { inboxPrefix: options.inboxPrefix }),
    ...(creds && { authenticator: credsAuthenticator(new Uint8Array(creds)) }),
    ...(tls && {
      tls: {
        ...(tls.caFile && { ca: readSetting('TLS CA', tls.caFile).toString('utf8') }),
        ...(tls.certFile && { cert: readSetting('TLS certificate', tls.certFile).toString('utf8') }),
        ...(tls.keyFile && { key: readSetting('TLS key', tls.keyFile).toString('utf8') }),
      },
    }),
    noAsyncTraces: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    reconnectJitter: RECONNECT_JITTER_MS,
    reconnectJitterTLS: RECONNECT_JITTER_TLS_MS,
    waitOnFirstConnect: true,
    timeout: CONNECT_TIMEOUT_MS,
  };
}

/**
 * One connection per process, with its own request mux (request-mux.ts) and its writes coalesced
 * per event-loop turn (coalescing-transport.ts). `noAsyncTraces` drops the stack capture the
 * client does on every request (measured on the hot path); reconnects never give up, because a
 * service that loses NATS has nothing else to do but get it back. Without credentials it
 * connects to an open NATS (development); with them, the server decides what this identity may
 * publish and subscribe.
 */
export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  // The client reads this factory at every (re)connect. It is process-wide: the client's own
  // `connect()` sets its plain transport back, which only costs a later connection the
  // coalesced writes, never correctness.
  setTransportFactory({ factory: () => new CoalescingTransport(), dnsResolveFn: nodeResolveHost });
  const nc = await NatsConnectionImpl.connect(natsConnectionOptions(options));
  muxes.set(nc, new RequestMux(nc, options.inboxPrefix));
  return nc;
}

const muxes = new WeakMap<NatsConnection, RequestMux>();

/**
 * The request mux of a connection made by `connectNats`; undefined for one made otherwise (a
 * test's own connection), whose requests go through the client's mux.
 */
export function requestMuxOf(nc: NatsConnection): RequestMux | undefined {
  return muxes.get(nc);
}
