// The model and skill catalogs of a Codex session [§3 catalogs], filtered to what the edge can
// show: hidden, malformed, oversized or duplicate entries are dropped, not passed on.
import type { AgentModel } from '#contracts';
import { DriverError, type SkillInfo } from '../agent-driver.js';
import {
  CALL_TIMEOUT_MS,
  MODEL_PAGE_SIZE,
  MODEL_PAGES_MAX,
  SKILL_DESCRIPTION_MAX_CHARS,
  SKILL_NAME_MAX_CHARS,
  SKILL_PATH_MAX_BYTES,
  SKILLS_MAX,
} from './codex-limits.js';
import { driverError } from '../agent-call.js';
import { isObject, str } from './codex-thread.js';
import type { JsonRpcConnection } from './json-rpc.js';
import { ModelCatalog } from '../model-catalog.js';

/** The models of one `model/list` page, added to the catalog (hidden ones left out). */
function addModels(data: unknown[], catalog: ModelCatalog): void {
  for (const entry of data) {
    if (!isObject(entry) || entry.hidden === true) continue;
    catalog.add(str(entry.model) ?? str(entry.id), str(entry.displayName));
  }
}

export async function listModels(rpc: JsonRpcConnection): Promise<AgentModel[]> {
  const catalog = new ModelCatalog();
  let cursor: string | undefined;
  for (let page = 0; page < MODEL_PAGES_MAX; page++) {
    let result: unknown;
    try {
      result = await rpc.call(
        'model/list',
        { limit: MODEL_PAGE_SIZE, includeHidden: false, ...(cursor ? { cursor } : {}) },
        CALL_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'unavailable', 'the model list');
    }
    if (!isObject(result) || !Array.isArray(result.data))
      throw new DriverError('unavailable', 'The agent listed models badly');
    addModels(result.data, catalog);
    cursor = str(result.nextCursor) || undefined;
    if (!cursor) break;
  }
  return catalog.models;
}

function skillInfo(skill: unknown): SkillInfo | undefined {
  if (!isObject(skill) || skill.enabled !== true) return undefined;
  const name = str(skill.name);
  const skillPath = str(skill.path);
  const description = str(skill.description);
  if (!name || name.length > SKILL_NAME_MAX_CHARS) return undefined;
  if (!skillPath || !skillPath.startsWith('/') || Buffer.byteLength(skillPath) > SKILL_PATH_MAX_BYTES)
    return undefined;
  if (description !== undefined && description.length > SKILL_DESCRIPTION_MAX_CHARS) return undefined;
  return { name, path: skillPath, ...(description ? { description } : {}) };
}

/** The enabled skills of `cwd`; a directory whose skills failed to load is an error. */
export async function listSkills(rpc: JsonRpcConnection, cwd: string): Promise<SkillInfo[]> {
  let result: unknown;
  try {
    result = await rpc.call('skills/list', { cwds: [cwd], forceReload: true }, CALL_TIMEOUT_MS);
  } catch (error) {
    throw driverError(error, 'unavailable', 'the skill list');
  }
  if (!isObject(result) || !Array.isArray(result.data))
    throw new DriverError('unavailable', 'The agent listed skills badly');
  const group = result.data.find((entry) => isObject(entry) && entry.cwd === cwd);
  if (!isObject(group)) return [];
  if (Array.isArray(group.errors) && group.errors.length > 0) {
    throw new DriverError('unavailable', 'The agent could not load the skills of this directory');
  }
  const skills: SkillInfo[] = [];
  for (const skill of Array.isArray(group.skills) ? group.skills : []) {
    if (skills.length >= SKILLS_MAX) break;
    const info = skillInfo(skill);
    if (info) skills.push(info);
  }
  return skills;
}
