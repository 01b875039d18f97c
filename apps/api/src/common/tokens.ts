/** Injection tokens of what the api is given at boot (the NATS connection uses NATS_CONNECTION). */
export const API_CONFIG = Symbol('API_CONFIG');
export const SUBJECTS = Symbol('SUBJECTS');
