/** Injection tokens for what main.ts builds before Nest starts (the NATS connection is #messaging's). */
export const EDGE_CONFIG = Symbol('EDGE_CONFIG');
