import { Injectable } from '@nestjs/common';
import { Limits, type PromptResolution } from '#contracts';
import { LuaScript } from '../common/lua-script.js';
import { RedisRepository } from '../common/redis-repository.js';

/** A prompt the router has no answer for is pending at revision 1; answered, it is revision 2. */
export const PROMPT_PENDING_REVISION = 1;
export const PROMPT_RESOLVED_REVISION = 2;

export type PromptClaim =
  /** This operation's answer is committed (now, or by an earlier run of the same operation). */
  | { kind: 'claimed'; resolution: PromptResolution }
  /** Someone else's answer holds: `resolved` when the caller named the resolved revision. */
  | { kind: 'stale' | 'already_resolved'; revision: number; resolution: PromptResolution };

/**
 * The compare-and-set on the prompt's revision (reference orca §4 respondTo): the first answer
 * is committed before the edge is asked; a caller naming another revision loses with the
 * winner's answer; naming the resolved revision is `already_resolved`.
 */
const RESOLVE = new LuaScript(`
local r = redis.call('HMGET', KEYS[1], 'op', 'selected', 'by', 'at')
if r[1] then
  if r[1] == ARGV[2] then return {'claimed', r[2], r[3], r[4]} end
  if ARGV[1] == '2' then return {'already_resolved', r[2], r[3], r[4]} end
  return {'stale', r[2], r[3], r[4]}
end
if ARGV[1] ~= '1' then return {'stale_pending'} end
redis.call('HSET', KEYS[1], 'op', ARGV[2], 'selected', ARGV[3], 'by', ARGV[4], 'at', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return {'claimed', ARGV[3], ARGV[4], ARGV[5]}
`);

/** Undoes this operation's answer (the edge refused it first-hand), never someone else's. */
const ROLLBACK = new LuaScript(`
if redis.call('HGET', KEYS[1], 'op') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`);

export interface PromptAnswer {
  sessionId: string;
  kind: 'approval' | 'input';
  promptId: string;
  expectedRevision: number;
  operationId: string;
  selectedOptionId: string;
  resolvedBy: string;
  resolvedAt: number;
}

@Injectable()
export class PromptRepository extends RedisRepository {
  async resolve(answer: PromptAnswer): Promise<PromptClaim> {
    const reply = (await RESOLVE.run(
      this.redis,
      [this.keys.prompt(answer.sessionId, answer.kind, answer.promptId)],
      [
        answer.expectedRevision,
        answer.operationId,
        answer.selectedOptionId,
        answer.resolvedBy,
        answer.resolvedAt,
        Limits.OPERATION_RETENTION_MS,
      ],
    )) as string[];
    const [kind, selected, by, at] = reply;
    if (kind === 'stale_pending') {
      return {
        kind: 'stale',
        revision: PROMPT_PENDING_REVISION,
        resolution: { resolved: false, selected_option_id: null, resolved_by: null, resolved_at: null },
      };
    }
    const resolution: PromptResolution = {
      resolved: true,
      selected_option_id: selected ?? null,
      resolved_by: by ?? null,
      resolved_at: at === undefined ? null : Number(at),
    };
    if (kind === 'claimed') return { kind, resolution };
    return {
      kind: kind === 'already_resolved' ? 'already_resolved' : 'stale',
      revision: PROMPT_RESOLVED_REVISION,
      resolution,
    };
  }

  async rollback(sessionId: string, kind: 'approval' | 'input', promptId: string, operationId: string) {
    await ROLLBACK.run(this.redis, [this.keys.prompt(sessionId, kind, promptId)], [operationId]);
  }
}
