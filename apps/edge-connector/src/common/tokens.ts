/** Injection token of the edge's validated config (NATS comes as #messaging's NatsBus). */
export const EDGE_CONFIG = Symbol('EDGE_CONFIG');
