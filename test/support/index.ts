export { testServices, stopTestContainers, uniqueNamespace, createTestDatabase } from './environment.js';
export type { TestServices, TestDatabase } from './environment.js';
export { ALL_PERMISSIONS, signToken, freePort, portOpen, ApiClient } from './http.js';
export type { ApiReply } from './http.js';
export { answerEdgeCredentials } from './edge-credentials.js';
export { TEST_JOURNAL_KEY, testJournalCipher } from './journal-key.js';
export { LIMITS_OFF_ENV } from './limits.js';
export { TEST_JWT_SECRET, TEST_EDGE_SECRET, DEV_JWT_SECRET, DEV_EDGE_SECRET } from './secrets.js';
export { sleep, pollUntil, eventually, waitUntil } from './polling.js';
export type { PollOptions, EventuallyOptions } from './polling.js';
export {
  findInstallation,
  createAccess,
  openSession,
  startOnAccess,
  startSession,
  sessionBase,
  watchUntil,
  watchUntilIdle,
  validRequest,
} from './agent-client.js';
export type {
  Snapshot,
  StartedSession,
  AccessFields,
  SavedAccess,
  WatchOptions,
  ObjectIds,
} from './agent-client.js';
