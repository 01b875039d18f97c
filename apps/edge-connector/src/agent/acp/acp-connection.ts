// One ACP agent process and its connection: launched in its own process group with an
// allow-listed environment (the Codex driver's process supervision), connected through the SDK's
// client app over the bounded stream, and initialized. The session that owns it is attached later,
// so a spare can be started and initialized before anyone asks for a session.
import { Logger } from '@nestjs/common';
import * as acp from '@agentclientprotocol/sdk';
import type { LaunchSpec } from '../child-launch.js';
import { CodexProcess as AgentProcess } from '../codex/codex-process.js';
import { AgentCallError } from '../agent-call.js';
import { CALL_TIMEOUT_MS, HANDSHAKE_TIMEOUT_MS, RPC_PENDING_CALLS_MAX } from './acp-limits.js';
import { boundedNdJsonStream, type StreamCloseReason } from './acp-stream.js';
import { isObject, type JsonObject } from './acp-events.js';

/** What the edge tells the agent about itself. */
const CLIENT_INFO = { name: 'tether-edge', title: 'Tether Edge', version: '0.1.0' };
/**
 * The edge offers no file system and no terminal to the agent: the agent uses its own tools, whose
 * every command or edit goes through a permission request. Nothing the agent asks of the client
 * can reach outside the session this way.
 */
const CLIENT_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
};

export type CloseReason = StreamCloseReason | 'process_exited' | 'closed_by_client';

/** Where an attached session receives what the agent sends. */
export interface ConnectionSink {
  onUpdate(params: JsonObject): void;
  onPermission(params: JsonObject): Promise<acp.RequestPermissionResponse>;
  onClosed(reason: CloseReason): void;
  /** An update of a kind the edge does not know was dropped. */
  onUnknownKind(kind: string): void;
}

const lenient = (params: unknown): JsonObject => (isObject(params) ? params : {});

export class AcpConnection {
  private readonly log = new Logger(AcpConnection.name);
  private sink: ConnectionSink | undefined;
  private connection!: acp.ClientConnection;
  private inFlight = 0;
  private closeReason: CloseReason | undefined;
  initialize!: acp.InitializeResponse;

  private constructor(readonly process: AgentProcess) {}

  static async launch(spec: LaunchSpec, handshakeTimeoutMs = HANDSHAKE_TIMEOUT_MS): Promise<AcpConnection> {
    const proc = await AgentProcess.launch(spec);
    const self = new AcpConnection(proc);
    const stream = boundedNdJsonStream(
      proc.child.stdout,
      proc.child.stdin,
      (reason) => self.ended(reason),
      (kind) => self.sink?.onUnknownKind(kind),
    );
    const app = acp
      .client({ name: CLIENT_INFO.name })
      // The driver reads the params itself (acp-events.ts) and takes only what it understands.
      .onNotification(acp.methods.client.session.update, lenient, ({ params }) => {
        if (isObject(params.update)) self.sink?.onUpdate(params.update);
      })
      .onRequest(acp.methods.client.session.requestPermission, lenient, ({ params }) =>
        self.sink ? self.sink.onPermission(params) : { outcome: { outcome: 'cancelled' as const } },
      );
    self.connection = app.connect(stream);
    void self.connection.closed.then(() => self.ended('stream_ended'));
    void proc.exited.then(() => self.ended('process_exited'));
    try {
      self.initialize = await self.call<acp.InitializeResponse>(
        acp.methods.agent.initialize,
        {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: CLIENT_CAPABILITIES,
          clientInfo: CLIENT_INFO,
        },
        handshakeTimeoutMs,
      );
    } catch (error) {
      await self.kill();
      throw error;
    }
    if (!isObject(self.initialize) || typeof self.initialize.protocolVersion !== 'number') {
      await self.kill();
      throw new AgentCallError('rejected', acp.methods.agent.initialize);
    }
    return self;
  }

  get closed(): boolean {
    return this.closeReason !== undefined;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Capabilities the agent advertised in `initialize`. */
  get loadSession(): boolean {
    return this.initialize.agentCapabilities?.loadSession === true;
  }

  /** The agent takes `image` blocks in a prompt. */
  get acceptsImages(): boolean {
    return this.initialize.agentCapabilities?.promptCapabilities?.image === true;
  }

  get agentVersion(): string | undefined {
    const version = this.initialize.agentInfo?.version;
    return typeof version === 'string' && version.length <= 64 ? version : undefined;
  }

  attach(sink: ConnectionSink): void {
    this.sink = sink;
    if (this.closeReason) sink.onClosed(this.closeReason);
  }

  /** One request to the agent, bounded in time and in how many are outstanding. */
  async call<T>(method: string, params: JsonObject, timeoutMs: number = CALL_TIMEOUT_MS): Promise<T> {
    if (this.closed) throw new AgentCallError('closed', method);
    if (this.inFlight >= RPC_PENDING_CALLS_MAX) throw new AgentCallError('too_many_calls', method);
    this.inFlight += 1;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => reject(new AgentCallError('timeout', method)), timeoutMs);
      }
    });
    try {
      return await Promise.race([this.connection.agent.request<T>(method, params), timeout]);
    } catch (error) {
      if (error instanceof AgentCallError) throw error;
      if (this.closed) throw new AgentCallError('closed', method);
      const code = error instanceof acp.RequestError ? error.code : undefined;
      throw new AgentCallError('rejected', method, code);
    } finally {
      clearTimeout(timer);
      this.inFlight -= 1;
    }
  }

  async notify(method: string, params: JsonObject): Promise<void> {
    if (this.closed) throw new AgentCallError('closed', method);
    try {
      await this.connection.agent.notify(method, params);
    } catch {
      throw new AgentCallError('closed', method);
    }
  }

  /** Closes stdin so the agent exits, then escalates to the whole process group. */
  async stop(): Promise<void> {
    this.ended('closed_by_client');
    this.connection?.close();
    await this.process.stop();
  }

  async kill(): Promise<void> {
    this.ended('closed_by_client');
    this.connection?.close();
    await this.process.kill();
  }

  private ended(reason: CloseReason): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    if (reason !== 'closed_by_client') {
      this.log.warn(`ACP agent process ${this.process.pid ?? '(none)'} ended its connection: ${reason}`);
      void this.process.stop();
    }
    this.sink?.onClosed(reason);
  }
}
