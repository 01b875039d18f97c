// How a process's main thread (its event loop) shared the CPUs, from /proc/<pid>/task/<pid>/schedstat
// (Linux): time spent running and time spent runnable but waiting for a CPU. On a box with more
// runnable work than cores, the second one is latency a service adds without doing any work.
import { readFileSync } from 'node:fs';

export interface SchedTimes {
  /** Seconds the main thread ran on a CPU. */
  running: number;
  /** Seconds the main thread was runnable but waited in a run queue. */
  waiting: number;
}

export function schedOf(pid: number | undefined): SchedTimes | null {
  if (!pid) return null;
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
    return { running: Number(run) / 1e9, waiting: Number(wait) / 1e9 };
  } catch {
    return null;
  }
}
