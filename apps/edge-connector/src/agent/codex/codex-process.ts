// The app-server child: launched in its own process group so closing a session also ends every
// command it started. (The environment it gets is built in ../child-launch.ts.)
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { DriverError } from '../agent-driver.js';
import { ACCOUNT_ENV_NAMES, type LaunchSpec, PROXY_ENV_NAMES } from '../child-launch.js';
import { GRACEFUL_EXIT_MS, STDERR_TAIL_BYTES, TERMINATE_EXIT_MS } from './codex-limits.js';

/**
 * Variables every launch may inherit. Provider keys are listed so the stock OpenAI provider works;
 * anything else (a custom provider's `env_key`) must be allowed by the operator.
 */
export const DEFAULT_ENV_ALLOW_LIST: readonly string[] = [
  ...ACCOUNT_ENV_NAMES,
  'CODEX_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_RUNTIME_DIR',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  ...PROXY_ENV_NAMES,
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'OPENAI_ORG_ID',
  'OPENAI_PROJECT_ID',
  'CODEX_API_KEY',
];

export type ExitInfo = { code: number | null; signal: NodeJS.Signals | null };

export class CodexProcess {
  private stderrTail = '';
  private exitInfo: ExitInfo | undefined;
  readonly exited: Promise<ExitInfo>;

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    // Drained so the child never blocks on a full pipe; kept short and only for local diagnostics.
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
  }

  /**
   * Resolves once the OS started the process; rejects if it could not — with a `launch_failed`
   * DriverError saying `failure` when given (the OS error may name paths of the owner's machine).
   */
  static launch(spec: LaunchSpec, failure?: string): Promise<CodexProcess> {
    const started = CodexProcess.spawn(spec);
    return failure === undefined
      ? started
      : started.catch(() => {
          throw new DriverError('launch_failed', failure);
        });
  }

  private static spawn(spec: LaunchSpec): Promise<CodexProcess> {
    return new Promise((resolve, reject) => {
      let child: ChildProcessWithoutNullStreams;
      try {
        child = spawn(spec.command, spec.args, {
          cwd: spec.cwd,
          env: spec.env,
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
          windowsHide: true,
        });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      child.once('error', reject);
      child.once('spawn', () => {
        child.off('error', reject);
        child.on('error', () => undefined);
        resolve(new CodexProcess(child));
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** The last bytes of stderr, for tests and local debugging; never sent anywhere. */
  get diagnostics(): string {
    return this.stderrTail;
  }

  /** Closes stdin (the app-server exits cleanly), then escalates to the whole process group. */
  async stop(): Promise<ExitInfo> {
    if (this.exitInfo) {
      this.signalGroup('SIGKILL'); // Leftover commands of a dead server.
      return this.exitInfo;
    }
    this.child.stdin.end();
    if (await this.waitExit(GRACEFUL_EXIT_MS)) {
      this.signalGroup('SIGKILL');
      return this.exitInfo!;
    }
    this.signalGroup('SIGTERM');
    if (await this.waitExit(TERMINATE_EXIT_MS)) {
      this.signalGroup('SIGKILL');
      return this.exitInfo!;
    }
    this.signalGroup('SIGKILL');
    await this.waitExit(TERMINATE_EXIT_MS);
    return this.exitInfo ?? { code: null, signal: 'SIGKILL' };
  }

  /** Kills the process group at once (a failed launch or handshake). */
  async kill(): Promise<void> {
    this.signalGroup('SIGKILL');
    await this.waitExit(TERMINATE_EXIT_MS);
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  private async waitExit(ms: number): Promise<boolean> {
    if (this.exitInfo) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const result = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return result;
  }
}
