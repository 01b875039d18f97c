// Which native items become activities, shared by the Codex event mapping (what it reports) and the
// session's activity log (what a snapshot keeps) so the two cannot drift apart.

/** Codex item kinds the edge projects as activities [§3 activity projection]; others stay native. */
export const ITEM_ACTIVITY_KINDS: readonly string[] = [
  'commandExecution',
  'fileChange',
  'webSearch',
  'mcpToolCall',
  'dynamicToolCall',
  'reasoning',
  'contextCompaction',
];

/** The file change kinds an activity may list; any other change is dropped. */
export const FILE_CHANGE_KINDS: ReadonlySet<string> = new Set(['add', 'delete', 'update']);
