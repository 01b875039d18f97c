export {
  testServices,
  stopTestContainers,
  uniqueNamespace,
  createTestDatabase,
} from './environment.js';
export type { TestServices, TestDatabase } from './environment.js';
