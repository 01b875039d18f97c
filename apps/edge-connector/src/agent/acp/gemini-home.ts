// Gemini CLI's private home on this edge (GEMINI_CLI_HOME): its settings turn off usage
// statistics, telemetry and auto-update (with them on, the CLI reaches play.googleapis.com), and
// keep session files (the CLI's retention cleanup can delete a loaded session's history).
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isObject, type JsonObject } from './acp-events.js';

/** Settings the edge always enforces; anything else the owner put there is kept. */
const ENFORCED: JsonObject = {
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: {
    enableAutoUpdate: false,
    enableAutoUpdateNotification: false,
    sessionRetention: { enabled: false },
  },
};
/** Project folders looked at for one session file; each edge project adds one. */
const PROJECT_DIRS_MAX = 256;

function merge(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    out[key] = isObject(value) && isObject(base[key]) ? merge(base[key], value) : value;
  }
  return out;
}

/**
 * Writes `<home>/.gemini/settings.json` with the enforced settings. `apiKeyAuth` selects API-key
 * sign-in (GEMINI_API_KEY), which also pins the model so no routing call is made per prompt.
 */
export async function prepareGeminiHome(home: string, apiKeyAuth: boolean): Promise<void> {
  const dir = path.join(home, '.gemini');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, 'settings.json');
  let current: JsonObject = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (isObject(parsed)) current = parsed;
  } catch {
    // Missing or unreadable: start from the enforced settings alone.
  }
  let next = merge(current, ENFORCED);
  if (apiKeyAuth && !isObject(isObject(next.security) ? next.security.auth : undefined)) {
    next = merge(next, { security: { auth: { selectedType: 'gemini-api-key' } } });
  }
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, file);
}

const minuteStamp = (date: Date, utc: boolean): string => {
  const pad = (n: number) => String(n).padStart(2, '0');
  const [y, mo, d, h, mi] = utc
    ? [
        date.getUTCFullYear(),
        date.getUTCMonth() + 1,
        date.getUTCDate(),
        date.getUTCHours(),
        date.getUTCMinutes(),
      ]
    : [date.getFullYear(), date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes()];
  return `${y}-${pad(mo)}-${pad(d)}T${pad(h)}-${pad(mi)}`;
};

/**
 * Gemini CLI 0.61 names a session file `session-<YYYY-MM-DDTHH-MM>-<first 8 of the id>.jsonl` and,
 * when asked to load a session in the wall-clock minute it was created, resets that very file: the
 * load fails and the history is gone. True when loading `sessionId` now would hit that.
 */
export async function createdThisMinute(home: string, sessionId: string, now = new Date()): Promise<boolean> {
  const short = sessionId.slice(0, 8);
  if (!/^[A-Za-z0-9-]{8}$/.test(short)) return false;
  const stamps = new Set([minuteStamp(now, true), minuteStamp(now, false)]);
  const tmp = path.join(home, '.gemini', 'tmp');
  let projects: string[];
  try {
    projects = (await readdir(tmp)).slice(0, PROJECT_DIRS_MAX);
  } catch {
    return false;
  }
  for (const project of projects) {
    let files: string[];
    try {
      files = await readdir(path.join(tmp, project, 'chats'));
    } catch {
      continue;
    }
    for (const stamp of stamps) if (files.includes(`session-${stamp}-${short}.jsonl`)) return true;
  }
  return false;
}
