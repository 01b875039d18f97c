// History is the only holder of the keys that mint edge NATS users and revoke them (docs/
// security.md "Edge credentials"): the account signing key signs one user per edge at
// enrollment and rotation; the operator signing key re-signs the account JWT with the list of
// revoked users, which a system-account connection pushes to the servers' resolver, so a
// revoked edge is disconnected at once and refused from then on.
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, NatsBus } from '#messaging';
import { keyFromSeed, mintEdgeUser, pushAccountJwt, tetherAccountJwt, type EdgeUser } from '#nats-auth';
import type { HistoryConfig } from '../config.js';
import { HISTORY_CONFIG } from '../common/tokens.js';
import type { EdgeAuthoritySettings } from './edge-authority.config.js';

@Injectable()
export class EdgeAuthority implements OnModuleDestroy {
  private readonly log = new Logger(EdgeAuthority.name);
  private readonly settings: EdgeAuthoritySettings | null;
  private system?: Promise<NatsConnection>;

  constructor(
    @Inject(HISTORY_CONFIG) private readonly config: HistoryConfig,
    private readonly bus: NatsBus,
  ) {
    this.settings = config.edgeAuthority;
  }

  /** False on an open development NATS: edges get a token and no NATS user. */
  get enabled(): boolean {
    return this.settings !== null;
  }

  /** A new NATS user for the edge, or null in development. */
  async mint(edgeId: string): Promise<EdgeUser | null> {
    if (!this.settings) return null;
    return mintEdgeUser(
      this.bus.subjects,
      edgeId,
      this.settings.account,
      keyFromSeed(this.settings.accountSigningSeed),
    );
  }

  /** Signs the account JWT with these revocations and pushes it to the resolver. */
  async publish(revocations: Record<string, number>): Promise<void> {
    if (!this.settings) return;
    const operatorSigning = keyFromSeed(this.settings.operatorSigningSeed);
    const jwt = await tetherAccountJwt({
      account: this.settings.account,
      signer: operatorSigning,
      signingKeys: [keyFromSeed(this.settings.accountSigningSeed).getPublicKey()],
      revocations,
    });
    await pushAccountJwt(await this.systemConnection(), jwt);
    this.log.log(`Account JWT pushed with ${Object.keys(revocations).length} revoked edge users.`);
  }

  private systemConnection(): Promise<NatsConnection> {
    if (!this.settings) throw new Error('No edge authority is configured.');
    const settings = this.settings;
    this.system ??= connectNats({
      ...this.config.nats,
      credsFile: settings.systemCredsFile,
      name: 'history-resolver-push',
    });
    return this.system;
  }

  async onModuleDestroy(): Promise<void> {
    const system = this.system;
    this.system = undefined;
    if (system) await (await system).close().catch(() => undefined);
  }
}
