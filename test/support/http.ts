// Small HTTP helpers for suites that drive the api from outside.
import { createConnection, createServer } from 'node:net';
import { SignJWT } from 'jose';

export const ALL_PERMISSIONS = ['ai.access.use', 'connectors:update', 'files.read', 'files.upload'];

export async function signToken(
  secret: string,
  sub: string,
  permissions: string[] = ALL_PERMISSIONS,
): Promise<string> {
  return new SignJWT({ permissions })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(secret));
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (typeof address === 'object' && address) resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface ApiReply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: { code: number; message: string; data?: T };
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  withToken(token: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    rawBody?: string,
  ): Promise<ApiReply<T>> {
    const headers: Record<string, string> = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined || rawBody !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? (JSON.parse(text) as ApiReply<T>['body']) : { code: response.status, message: '' },
    };
  }

  /** POST /api/v1/edge-agents and return `data` (the EdgeAgentResult) of a 200. */
  async agent<T = Record<string, unknown>>(request: Record<string, unknown>): Promise<T> {
    const reply = await this.call<T>('POST', '/api/v1/edge-agents', request);
    if (reply.status !== 200 || !reply.body.data) {
      throw new Error(
        `${String(request.action)} answered HTTP ${reply.status}: ${JSON.stringify(reply.body)}`,
      );
    }
    return reply.body.data;
  }
}
