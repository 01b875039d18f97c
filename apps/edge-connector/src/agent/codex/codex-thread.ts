// Opening a Codex thread safely [§3 threads]: the sign-in check, the overrides that turn off every
// local integration, thread start or resume, and the proof that no integration is left enabled.
import type { OpenSessionOptions } from '../agent-driver.js';
import { DriverError } from '../agent-driver.js';
import { CALL_TIMEOUT_MS, CONFIG_OVERRIDES_MAX, MCP_STATUS_LIMIT } from './codex-limits.js';
import { type JsonObject, type JsonRpcConnection } from './json-rpc.js';
import { driverError } from '../agent-call.js';

/** Stored in the rollout so threads started by Tether can be told apart. */
const SERVICE_NAME = 'tether';
/**
 * Lets the agent ask the user (`item/tool/requestUserInput`) in ordinary turns. Without it Codex
 * asks only in Plan collaboration mode, which needs the experimental API and also changes how the
 * model works (it plans instead of acting); the edge has no plan mode to offer, so it keeps the
 * default mode and enables the questions alone. Checked against codex 0.171.
 */
const INPUT_FEATURE = 'features.default_mode_request_user_input';
/** A config key that can be addressed in a dotted override without ambiguity. */
const OVERRIDE_NAME = /^[^.\s\p{Cc}"'[\]]{1,128}$/u;

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export interface ThreadInfo {
  id: string;
  model: string | undefined;
  title: string | undefined;
  version: string | undefined;
}

export async function preflight(rpc: JsonRpcConnection): Promise<void> {
  const result = await rpc.call<unknown>('account/read', { refreshToken: false }, CALL_TIMEOUT_MS);
  if (!isObject(result)) throw new DriverError('launch_failed', 'The agent answered the account check badly');
  const ready = result.requiresOpenaiAuth !== true || isObject(result.account);
  if (!ready) throw new DriverError('authentication_required', 'Codex needs a sign-in on this machine');
}

/**
 * Per-thread overrides that turn off every integration the local config declares, so a remote
 * user never reaches the owner's apps, MCP servers or plugins [§3 threads]. Nothing else of the
 * local config is forwarded.
 */
export async function threadOverrides(rpc: JsonRpcConnection, cwd: string): Promise<JsonObject> {
  let result: unknown;
  try {
    result = await rpc.call('config/read', { cwd, includeLayers: false }, CALL_TIMEOUT_MS);
  } catch (error) {
    throw driverError(error, 'external_tools', 'the config read');
  }
  if (!isObject(result) || !isObject(result.config)) {
    throw new DriverError('external_tools', 'The agent config could not be read');
  }
  const overrides: JsonObject = { 'features.apps': false, [INPUT_FEATURE]: true };
  const names = (section: unknown): string[] => (isObject(section) ? Object.keys(section) : []);
  const mcp = names(result.config.mcp_servers);
  const plugins = names(result.config.plugins);
  if (mcp.length + plugins.length > CONFIG_OVERRIDES_MAX) {
    throw new DriverError('external_tools', 'Too many configured integrations to disable');
  }
  for (const [prefix, list] of [
    ['mcp_servers', mcp],
    ['plugins', plugins],
  ] as const) {
    for (const name of list) {
      if (!OVERRIDE_NAME.test(name)) {
        throw new DriverError('external_tools', `A configured ${prefix} entry cannot be disabled`);
      }
      overrides[`${prefix}.${name}.enabled`] = false;
    }
  }
  return overrides;
}

async function openThread(
  rpc: JsonRpcConnection,
  options: OpenSessionOptions,
  config: JsonObject,
): Promise<unknown> {
  const base = { cwd: options.cwd, sandbox: 'read-only', approvalPolicy: 'on-request', config };
  if (options.threadId !== undefined) {
    try {
      return await rpc.call(
        'thread/resume',
        { ...base, threadId: options.threadId, excludeTurns: true },
        CALL_TIMEOUT_MS,
      );
    } catch (error) {
      throw driverError(error, 'resume_unavailable', 'the thread resume');
    }
  }
  try {
    return await rpc.call(
      'thread/start',
      { ...base, ephemeral: false, serviceName: SERVICE_NAME },
      CALL_TIMEOUT_MS,
    );
  } catch (error) {
    throw driverError(error, 'launch_failed', 'the thread start');
  }
}

/** Starts the thread, or resumes `options.threadId`, which must come back as the same thread. */
export async function startThread(
  rpc: JsonRpcConnection,
  options: OpenSessionOptions,
  config: JsonObject,
): Promise<ThreadInfo> {
  const result = await openThread(rpc, options, config);
  const thread = isObject(result) && isObject(result.thread) ? result.thread : undefined;
  const id = thread && str(thread.id);
  if (!isObject(result) || !thread || !id)
    throw new DriverError('launch_failed', 'The agent returned no thread');
  if (options.threadId !== undefined && id !== options.threadId) {
    throw new DriverError('resume_unavailable', 'The agent resumed a different thread');
  }
  return {
    id,
    model: str(result.model) ?? str(thread.model),
    title: str(thread.name),
    version: str(thread.cliVersion),
  };
}

/** Every MCP server must be disabled with no tools, on one page; otherwise refuse [§3 threads]. */
export async function verifyToolsDisabled(rpc: JsonRpcConnection, threadId: string): Promise<void> {
  let result: unknown;
  try {
    result = await rpc.call('mcpServerStatus/list', { threadId, limit: MCP_STATUS_LIMIT }, CALL_TIMEOUT_MS);
  } catch (error) {
    throw driverError(error, 'external_tools', 'the integration check');
  }
  if (!isObject(result) || !Array.isArray(result.data) || (result.nextCursor ?? null) !== null) {
    throw new DriverError('external_tools', 'Integrations could not be proven disabled');
  }
  for (const server of result.data) {
    const disabled =
      isObject(server) &&
      server.runtimeStatus === 'disabled' &&
      (!isObject(server.tools) || Object.keys(server.tools).length === 0);
    if (!disabled) throw new DriverError('external_tools', 'An integration is still enabled');
  }
}
