/** Injection tokens of the history service's shared providers. */
export const HISTORY_CONFIG = Symbol('HISTORY_CONFIG');
