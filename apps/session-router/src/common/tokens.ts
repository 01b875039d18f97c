/** Injection tokens of the router's shared providers. */
export const ROUTER_CONFIG = Symbol('ROUTER_CONFIG');
export const REDIS = Symbol('REDIS');
