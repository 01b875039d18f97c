/** Injection token of the api's validated config (NATS comes as #messaging's NatsBus). */
export const API_CONFIG = Symbol('API_CONFIG');
