// The ports of a stack that runs services as several replicas (the clustered, rolling-restart
// and clustered-fault suites): each replica's ops port (metrics, /readyz), the second api's HTTP
// port, the environment that hands them out, and a balancer in front of both apis.
import { freePort } from './http.js';
import {
  CLUSTERED_REPLICAS,
  type ServiceName,
  type Stack,
  type StackOptions,
} from '../../scripts/stack/launcher.js';
import { startE2eStack, type E2eStack, type E2eStackOptions } from './e2e-stack.js';
import { LIMITS_OFF_ENV } from './limits.js';
import { LoadBalancer } from './load-balancer.js';

export class ReplicaPorts {
  private constructor(
    private readonly ops: ReadonlyMap<ServiceName, number>,
    /** `api-2`'s HTTP port (the first api's is the stack's own). */
    readonly secondApiPort: number,
  ) {}

  /** A free ops port for each of `names`, and one for the second api's HTTP. */
  static async allocate(names: readonly ServiceName[]): Promise<ReplicaPorts> {
    const ops = new Map<ServiceName, number>();
    for (const name of names) ops.set(name, await freePort());
    return new ReplicaPorts(ops, await freePort());
  }

  get secondApiUrl(): string {
    return `http://127.0.0.1:${this.secondApiPort}`;
  }

  readyUrl(name: ServiceName): string {
    return `http://127.0.0.1:${this.ops.get(name)}/readyz`;
  }

  /** Whether the replica's /readyz answers 200 now (a replica that is down is not ready). */
  async isReady(name: ServiceName): Promise<boolean> {
    try {
      return (await fetch(this.readyUrl(name), { signal: AbortSignal.timeout(2_000) })).status === 200;
    } catch {
      return false;
    }
  }

  /** The stack's `serviceEnv`: each replica its ops port, `api-2` its HTTP port besides. */
  serviceEnv(): NonNullable<StackOptions['serviceEnv']> {
    const env: NonNullable<StackOptions['serviceEnv']> = {};
    for (const [name, port] of this.ops) env[name] = { TETHER_METRICS_PORT: String(port) };
    env['api-2'] = { ...env['api-2'], TETHER_HTTP_PORT: String(this.secondApiPort) };
    return env;
  }

  /** A started balancer over `api` and `api-2`, probing their /readyz as a kubelet would. */
  async balancer(stack: Stack): Promise<LoadBalancer> {
    const balancer = new LoadBalancer([
      { url: stack.apiUrl, readyUrl: this.readyUrl('api') },
      { url: this.secondApiUrl, readyUrl: this.readyUrl('api-2') },
    ]);
    await balancer.start();
    return balancer;
  }
}

export interface ClusteredStackOptions {
  natsUrl: string;
  redisUrl: string;
  readyTimeoutMs: number;
  env: Record<string, string>;
}

/**
 * The stack of a clustered run (CLUSTERED_REPLICAS): three routers, two apis and two histories
 * on a NATS cluster with replicated streams and a Redis Cluster, no per-user limits (one test
 * user carries all the load), plus the run's own `env`.
 */
function clusteredStack(options: ClusteredStackOptions & { ports: ReplicaPorts }): Partial<StackOptions> {
  return {
    natsUrl: options.natsUrl,
    redisUrl: options.redisUrl,
    readyTimeoutMs: options.readyTimeoutMs,
    secondRouter: true,
    thirdRouter: true,
    secondApi: true,
    secondHistory: true,
    extraEnv: { ...LIMITS_OFF_ENV, TETHER_JETSTREAM_REPLICAS: '3', ...options.env },
    serviceEnv: options.ports.serviceEnv(),
  };
}

/** A clustered run's whole stack as processes (see clusteredStack), and its replicas' ports. */
export async function startClusteredE2e(
  options: Omit<E2eStackOptions, 'stack'> & ClusteredStackOptions,
): Promise<{ e2e: E2eStack; ports: ReplicaPorts }> {
  const { natsUrl, redisUrl, readyTimeoutMs, env, ...e2eOptions } = options;
  const ports = await ReplicaPorts.allocate(CLUSTERED_REPLICAS);
  const stack = clusteredStack({ natsUrl, redisUrl, readyTimeoutMs, env, ports });
  return { e2e: await startE2eStack({ ...e2eOptions, stack }), ports };
}
