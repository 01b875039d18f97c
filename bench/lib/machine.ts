// The facts about the machine and the code a result was measured on, stored with every result.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { resolve } from 'node:path';

export interface MachineFacts {
  cpu_model: string;
  cores: number;
  memory_bytes: number;
  free_memory_bytes: number;
  load_average: number[];
  node_version: string;
  platform: string;
  commit: string;
  /** Uncommitted changes in the work tree when the run started. */
  dirty: boolean;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export function machineFacts(): MachineFacts {
  const cores = cpus();
  return {
    cpu_model: cores[0]?.model ?? 'unknown',
    cores: cores.length,
    memory_bytes: totalmem(),
    free_memory_bytes: freemem(),
    load_average: loadavg().map((value) => Math.round(value * 100) / 100),
    node_version: process.version,
    platform: `${process.platform} ${process.arch}`,
    commit: git(['rev-parse', 'HEAD']),
    dirty: git(['status', '--porcelain']).length > 0,
  };
}

/** Writes `bench/results/<name>-<timestamp>.json` (gitignored) and returns its path. */
export function writeResult(name: string, machine: MachineFacts, body: Record<string, unknown>): string {
  const dir = resolve(process.cwd(), 'bench/results');
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = resolve(dir, `${name}-${stamp}.json`);
  writeFileSync(
    path,
    JSON.stringify({ benchmark: name, finished_at: new Date().toISOString(), machine, ...body }, null, 2) +
      '\n',
  );
  return path;
}

/** Resident set size of a process in bytes, from /proc (Linux). */
export function rssOf(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux; 100 ticks a second). */
export function cpuSecondsOf(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
