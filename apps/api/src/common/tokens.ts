/** Injection token of the api's validated config (the NATS connection and subjects come as #messaging's NatsBus). */
export const API_CONFIG = Symbol('API_CONFIG');
