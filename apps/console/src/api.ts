// Every call to the api: relative URLs (the console works under any path prefix), the bearer
// token, the `{code,message,data}` envelope, and typed errors the pages can show.
import type { EdgeAgentRequest, EdgeAgentResult } from '../../../libs/contracts/src/edge-agent.js';
import { currentToken, signOut } from './auth.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The api URL of a path like `api/v1/...`, resolved against the page (any prefix). */
export function apiUrl(path: string): string {
  return new URL(path, document.baseURI).toString();
}

/** A W3C traceparent with a fresh trace id: the console names each send's trace itself. */
export function newTraceparent(): { header: string; traceId: string } {
  const hex = (bytes: number) =>
    [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  return { header: `00-${traceId}-${hex(8)}-01`, traceId };
}

export function authHeaders(): Record<string, string> {
  const token = currentToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

const MESSAGES: Record<number, string> = {
  400: 'The api refused the request as invalid.',
  401: 'Your sign-in has expired.',
  403: 'You are not allowed to do this.',
  404: 'Not found.',
  409: 'Someone changed this at the same time; reload and try again.',
  503: 'The service is unavailable right now; try again shortly.',
};

export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(), ...extraHeaders };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(apiUrl(path), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The api cannot be reached; check your connection.');
  }
  if (response.status === 401) signOut('Your sign-in has expired; sign in again.');
  const text = await response.text();
  let parsed: { data?: T; message?: string } = {};
  try {
    parsed = text ? (JSON.parse(text) as typeof parsed) : {};
  } catch {
    // Not JSON (a proxy's error page): the status alone is the answer.
  }
  if (!response.ok) {
    throw new ApiError(response.status, MESSAGES[response.status] ?? `The api answered ${response.status}.`);
  }
  return parsed.data as T;
}

/** What the statuses of the contract mean to a person (docs/contract.md, reference §9.12). */
export const STATUS_TEXT: Record<string, string> = {
  ok: 'OK',
  busy: 'The agent is busy; wait for the current turn or try again.',
  unavailable: 'The edge is unavailable (offline or not answering).',
  upgrade_required: 'The edge must be upgraded for this.',
  not_found: 'Not found on the edge.',
  unsupported_user: 'The edge runs under an account agents may not use.',
  launch_failed: 'The agent could not be started.',
  external_tools: 'The agent has external tools enabled and was refused.',
  authentication_required: 'The agent on the edge needs a sign-in.',
  session_closed: 'The session is closed.',
  turn_failed: 'The last turn failed.',
  approval_declined: 'A request of the agent was declined.',
  output_limit: 'The output limit was reached.',
  expired: 'The session expired after being idle.',
  invalid_request: 'The edge refused the request as invalid.',
  resume_unavailable: 'This session cannot be resumed.',
};

export type AgentRequest = Omit<EdgeAgentRequest, 'action'> & { action: EdgeAgentRequest['action'] };

/** POST /api/v1/edge-agents; edge outcomes come back as `status`, HTTP errors as ApiError. */
export function agent(request: AgentRequest, headers: Record<string, string> = {}): Promise<EdgeAgentResult> {
  return call<EdgeAgentResult>('POST', 'api/v1/edge-agents', request, headers);
}

/** Throws the person-readable text of a non-ok status. */
export function expectOk(result: EdgeAgentResult): EdgeAgentResult {
  if (result.status !== 'ok') throw new ApiError(200, STATUS_TEXT[result.status] ?? result.status);
  return result;
}
