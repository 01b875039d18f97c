// Sign-in: OpenID Connect authorization code + PKCE at the issuer the api trusts, or (development
// api only) the development sign-in. The token lives in this tab's sessionStorage, never in a
// cookie; sign-out removes it and every cached session view.
import { useEffect, useState } from 'preact/hooks';

export interface ConsoleConfig {
  oidc: { issuer: string; client_id: string; scopes: string } | null;
  dev_sign_in: boolean;
  trace_url_template: string | null;
}

interface Session {
  token: string;
  sub: string;
  /** ms since epoch */
  expiresAt: number;
  /** How the token was obtained: OIDC sign-out may end the provider's session too. */
  via: 'oidc' | 'dev';
}

const TOKEN_KEY = 'tether.auth';
const PENDING_KEY = 'tether.oidc.pending';
/** Everything this console caches per tab starts with this. */
export const STORAGE_PREFIX = 'tether.';

let session: Session | null = readSession();
let notice: string | null = null;
const listeners = new Set<() => void>();
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

function readSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(TOKEN_KEY);
    const parsed = raw ? (JSON.parse(raw) as Session) : null;
    return parsed && parsed.expiresAt > Date.now() ? parsed : null;
  } catch {
    return null;
  }
}

function changed(): void {
  clearTimeout(expiryTimer);
  if (session) {
    // setTimeout's bound is ~24.8 days; tokens are far shorter.
    const left = Math.min(session.expiresAt - Date.now(), 2 ** 31 - 1);
    expiryTimer = setTimeout(() => signOut('Your sign-in has expired; sign in again.'), Math.max(left, 0));
  }
  for (const listener of listeners) listener();
}

export function currentToken(): string | null {
  return session?.token ?? null;
}

/** The JWT's `sub` and `exp`, read (not verified: the api verifies) to show who is signed in. */
function claims(token: string): { sub: string; exp: number } {
  const payload = token.split('.')[1] ?? '';
  const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
  const parsed = JSON.parse(json) as { sub?: unknown; exp?: unknown };
  if (typeof parsed.sub !== 'string' || typeof parsed.exp !== 'number')
    throw new Error('Token without sub/exp.');
  return { sub: parsed.sub, exp: parsed.exp };
}

function adopt(token: string, via: Session['via']): void {
  const { sub, exp } = claims(token);
  session = { token, sub, expiresAt: exp * 1000, via };
  notice = null;
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify(session));
  changed();
}

export function signOut(reason?: string): void {
  const wasSignedIn = session !== null;
  session = null;
  notice = reason ?? null;
  for (const key of Object.keys(sessionStorage)) {
    if (key.startsWith(STORAGE_PREFIX) && key !== PENDING_KEY) sessionStorage.removeItem(key);
  }
  if (wasSignedIn || reason) changed();
}

export function useAuth(): { session: Session | null; notice: string | null } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    changed();
    return () => void listeners.delete(listener);
  }, []);
  return { session, notice };
}

export async function devSignIn(sub: string): Promise<void> {
  const response = await fetch(new URL('api/v1/console/dev-token', document.baseURI), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sub }),
  });
  if (!response.ok)
    throw new Error(response.status === 400 ? 'That user name is not valid.' : 'Sign-in failed.');
  const body = (await response.json()) as { data: { token: string } };
  adopt(body.data.token, 'dev');
}

// --- OpenID Connect, authorization code + PKCE (RFC 7636) -------------------------------------

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
}

interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

function randomText(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function discover(issuer: string): Promise<Discovery> {
  const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error('The identity provider cannot be reached.');
  const document = (await response.json()) as Partial<Discovery> & { issuer?: string };
  if (document.issuer !== issuer || !document.authorization_endpoint || !document.token_endpoint) {
    throw new Error('The identity provider describes another issuer.');
  }
  return document as Discovery;
}

/** The page itself, without query or fragment: where the provider sends the browser back. */
function redirectUri(): string {
  return `${location.origin}${location.pathname}`;
}

export async function startOidc(config: NonNullable<ConsoleConfig['oidc']>): Promise<void> {
  const discovery = await discover(config.issuer);
  const pending: Pending = {
    state: randomText(),
    nonce: randomText(),
    verifier: randomText(48),
    returnTo: location.hash,
  };
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier))),
  );
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: redirectUri(),
    scope: config.scopes,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

/** When the provider sent the browser back with a code, trades it for tokens. */
export async function completeOidc(config: ConsoleConfig['oidc']): Promise<void> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (!code && !error) return;
  const pendingRaw = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const pending = pendingRaw ? (JSON.parse(pendingRaw) as Pending) : null;
  // The code is single-use and must not stay in the address bar or the history.
  history.replaceState(null, '', `${redirectUri()}${pending?.returnTo ?? ''}`);
  if (error) throw new Error('The identity provider refused the sign-in.');
  if (!config || !pending || params.get('state') !== pending.state) {
    throw new Error('The sign-in answer does not match this tab; sign in again.');
  }
  const discovery = await discover(config.issuer);
  const response = await fetch(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code ?? '',
      redirect_uri: redirectUri(),
      client_id: config.client_id,
      code_verifier: pending.verifier,
    }),
  });
  if (!response.ok) throw new Error('The identity provider refused the sign-in code.');
  const tokens = (await response.json()) as { access_token?: string; id_token?: string };
  // The api verifies JWTs: a JWT access token for it when the provider issues one, else the ID
  // token (audience = this client), whose nonce must be the one this tab sent.
  const isJwt = (value?: string) => typeof value === 'string' && value.split('.').length === 3;
  if (isJwt(tokens.access_token)) return adopt(tokens.access_token as string, 'oidc');
  if (!tokens.id_token || !isJwt(tokens.id_token))
    throw new Error('The identity provider sent no usable token.');
  const payload = JSON.parse(atob(tokens.id_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as {
    nonce?: string;
  };
  if (payload.nonce !== pending.nonce)
    throw new Error('The sign-in answer does not match this tab; sign in again.');
  adopt(tokens.id_token, 'oidc');
}
