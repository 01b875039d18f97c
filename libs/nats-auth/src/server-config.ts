// The authorization part of a nats-server configuration in operator mode: the operator JWT, the
// system account and a full resolver (account JWTs kept on disk, so a revocation pushed at run
// time survives a restart) preloaded with the two accounts. deploy/nats/nats-server.conf
// includes it; `npm run nats:setup` writes it.

export interface ResolverConfigInput {
  operatorJwt: string;
  systemAccount: string;
  systemAccountJwt: string;
  tetherAccount: string;
  tetherAccountJwt: string;
  /** Where the server keeps account JWTs (a volume in containers). */
  resolverDir: string;
}

/** nats-server config text; JWTs are base64url and dots only, safe inside double quotes. */
export function resolverConfig(input: ResolverConfigInput): string {
  return [
    '# Written by `npm run nats:setup`: operator mode with a full resolver (docs/security.md).',
    `operator: "${input.operatorJwt}"`,
    `system_account: ${input.systemAccount}`,
    'resolver: {',
    '  type: full',
    `  dir: "${input.resolverDir}"`,
    '  allow_delete: false',
    '  interval: "2m"',
    '}',
    'resolver_preload: {',
    `  ${input.systemAccount}: "${input.systemAccountJwt}"`,
    `  ${input.tetherAccount}: "${input.tetherAccountJwt}"`,
    '}',
    '',
  ].join('\n');
}
