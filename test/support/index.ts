export { testServices, stopTestContainers, uniqueNamespace, createTestDatabase } from './environment.js';
export type { TestServices, TestDatabase } from './environment.js';
export { ALL_PERMISSIONS, signToken, freePort, ApiClient } from './http.js';
export type { ApiReply } from './http.js';
export { answerEdgeCredentials } from './edge-credentials.js';
export { TEST_JOURNAL_KEY, testJournalCipher } from './journal-key.js';
export { LIMITS_OFF_ENV } from './limits.js';
