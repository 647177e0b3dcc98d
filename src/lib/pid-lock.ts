import { readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Another live process holds the lock. */
export class LockHeldError extends Error {
  override name = 'LockHeldError';
  readonly pid: number;
  constructor(message: string, pid: number) {
    super(message);
    this.pid = pid;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (probe) {
    return (probe as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A lock file holding the owner's pid: one process at a time for what `what` names. A lock left by a process
 * that is gone (kill -9, power loss) is taken over. Returns the release function.
 */
export function acquirePidLock(file: string, what: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || isAlive(pid))) {
        throw new LockHeldError(`${what} is in use by process ${pid} (one process per DATA_DIR)`, pid);
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${file}`);
}
