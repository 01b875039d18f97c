import { Inject, Injectable, Logger } from '@nestjs/common';
import { SignJWT } from 'jose';
import { API_CONFIG } from '../common/tokens.js';
import { DEVELOPMENT_JWT_SECRET, type ApiConfig } from '../config.js';
import { PERMISSIONS } from '../auth/principal.js';
import {
  defaultConsoleDir,
  loadConsoleBundle,
  type ConsoleAsset,
  type ConsoleBundle,
} from './console.assets.js';

/** A development sign-in lasts a working day; the console signs in again after it. */
const DEV_TOKEN_TTL_S = 8 * 3600;

/** What GET /api/v1/console/config tells the console (public: no secret in it). */
export interface ConsolePublicConfig {
  oidc: { issuer: string; client_id: string; scopes: string } | null;
  /** True only when the api verifies tokens with the development secret. */
  dev_sign_in: boolean;
  /** `{trace_id}` is replaced by a turn's trace id; null: no trace links. */
  trace_url_template: string | null;
}

/** The built console, its public settings, and development tokens (development api only). */
@Injectable()
export class ConsoleService {
  private readonly log = new Logger(ConsoleService.name);
  private readonly bundle: ConsoleBundle | undefined;
  readonly publicConfig: ConsolePublicConfig;
  readonly contentSecurityPolicy: string;
  private readonly devSecret: Uint8Array | undefined;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    const dir = config.console?.assetsDir ?? defaultConsoleDir();
    this.bundle = dir === undefined ? undefined : loadConsoleBundle(dir);
    if (!this.bundle) this.log.warn('The console is not built (npm run build:console); / answers 404.');
    const oidc = config.console?.oidc;
    const key = config.jwt.key;
    const development = key.kind === 'secret' && key.secret === DEVELOPMENT_JWT_SECRET;
    this.devSecret = development ? new TextEncoder().encode(DEVELOPMENT_JWT_SECRET) : undefined;
    this.publicConfig = {
      oidc: oidc ? { issuer: oidc.issuer, client_id: oidc.clientId, scopes: oidc.scopes } : null,
      dev_sign_in: development,
      trace_url_template: config.console?.traceUrlTemplate ?? null,
    };
    // The only other origin the page talks to is the OpenID provider (discovery, token exchange).
    const connect = ["'self'", ...(oidc ? [new URL(oidc.issuer).origin] : [])].join(' ');
    this.contentSecurityPolicy = [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data: blob:",
      `connect-src ${connect}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
  }

  get index(): string | undefined {
    return this.bundle?.index;
  }

  asset(name: string): ConsoleAsset | undefined {
    return this.bundle?.assets.get(name);
  }

  get devSignIn(): boolean {
    return this.devSecret !== undefined;
  }

  /** A token with every permission for `sub`, signed with the development secret. */
  async devToken(sub: string): Promise<{ token: string; expires_in: number }> {
    if (!this.devSecret) throw new Error('Development tokens exist only with the development secret.');
    const token = await new SignJWT({ permissions: [...PERMISSIONS] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(sub)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + DEV_TOKEN_TTL_S)
      .sign(this.devSecret);
    this.log.log(`Issued a development token for ${sub}.`);
    return { token, expires_in: DEV_TOKEN_TTL_S };
  }
}
