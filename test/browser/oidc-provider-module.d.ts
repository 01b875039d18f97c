// The part of `oidc-provider` (which ships no types) the sign-in test uses.
declare module 'oidc-provider' {
  import type { Server } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    listen(port: number, host: string, listening: () => void): Server;
  }
}
