/** Injection token of history's validated config (NATS comes as #messaging's NatsBus). */
export const HISTORY_CONFIG = Symbol('HISTORY_CONFIG');
