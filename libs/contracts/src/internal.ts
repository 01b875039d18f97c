// Messages between Tether's own services. Never exposed over HTTP. One module per concern under
// internal/; this barrel keeps every importer of './internal.js' working.
export * from './internal/router-messages.js';
export * from './internal/journal-rows.js';
export * from './internal/accounts.js';
export * from './internal/stored-sessions.js';
export * from './internal/audit.js';
export * from './internal/journal-pages.js';
export * from './internal/lifecycle.js';
