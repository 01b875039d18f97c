import { JournalCipher } from '#messaging';

/** The journal content key of every test stack (TETHER_JOURNAL_KEY); a test value, never a deployment's. */
export const TEST_JOURNAL_KEY = 'tether-test-journal-key-0123456789abcdef';

/** A cipher under the tests' journal key: seals rows a test publishes, opens rows it reads back. */
export function testJournalCipher(): JournalCipher {
  return new JournalCipher(TEST_JOURNAL_KEY);
}
