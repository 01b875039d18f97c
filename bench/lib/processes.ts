// Helper processes of a benchmark (baseline servers, simulated edges): forked with IPC, each
// says `ready` once it serves, and is stopped with SIGTERM by the run that started it.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const READY_TIMEOUT_MS = 20_000;

export async function forkReady(script: string, args: string[]): Promise<ChildProcess> {
  const child = fork(script, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${script} ${args[0]} was not ready in time.`)),
      READY_TIMEOUT_MS,
    );
    child.once('message', () => {
      clearTimeout(timer);
      resolve();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} ${args[0]} exited with code ${code}.`));
    });
  });
  return child;
}

export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
