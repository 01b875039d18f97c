import { Logger, type LoggerService, type LogLevel } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import { loadTelemetryConfig } from './config.js';

const ALL_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/** Where a line goes: stdout for the ordinary levels, stderr for problems (as Nest does). */
type Sink = (line: string) => void;
const toStdout: Sink = (line) => process.stdout.write(line);
const toStderr: Sink = (line) => process.stderr.write(line);

/**
 * Nest's logger as one JSON object per line, with the active trace and span ids so a log line
 * leads to its trace. Messages are whatever the app logged (never prompts, output or secrets:
 * the apps' own rule); only `Error` stacks are added, for errors.
 */
export class JsonLogger implements LoggerService {
  private levels = new Set<LogLevel>(ALL_LEVELS);

  constructor(
    private readonly out: Sink = toStdout,
    private readonly err: Sink = toStderr,
  ) {}

  setLogLevels(levels: LogLevel[]): void {
    this.levels = new Set(levels);
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write('log', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('verbose', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: LogLevel, message: unknown, rest: unknown[]): void {
    if (!this.levels.has(level)) return;
    // Nest passes the context as the last string argument, and for errors a stack before it.
    const context = typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const stack =
      (level === 'error' || level === 'fatal') && rest.length >= 2 && typeof rest[0] === 'string'
        ? rest[0]
        : undefined;
    const entry: Record<string, unknown> = {
      time: new Date().toISOString(),
      level,
      context,
      msg: message instanceof Error ? message.message : message,
    };
    if (message instanceof Error && (level === 'error' || level === 'fatal')) entry.stack = message.stack;
    else if (stack) entry.stack = stack;
    const span = trace.getActiveSpan()?.spanContext();
    if (span && span.traceId !== '00000000000000000000000000000000') {
      entry.trace_id = span.traceId;
      entry.span_id = span.spanId;
    }
    const line = `${JSON.stringify(entry)}\n`;
    if (level === 'error' || level === 'fatal') this.err(line);
    else this.out(line);
  }
}

/** Makes JsonLogger Nest's logger for the process, unless `TETHER_LOG_FORMAT=text`. */
export function installLogger(): void {
  if (loadTelemetryConfig().logFormat !== 'json') return;
  Logger.overrideLogger(new JsonLogger());
}
