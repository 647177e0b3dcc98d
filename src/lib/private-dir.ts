/**
 * The data directory belongs to the service's user alone: it holds the embedded database (password hashes, sealed
 * values, its write-ahead log), the chain, the local mailbox (reset links) and the generated master key.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Group and others get nothing: new directories are 0700, new files 0600. */
export const PRIVATE_UMASK = 0o077;

/**
 * Makes `dir` private before anything is written in it: the process's umask becomes `PRIVATE_UMASK` (so every file
 * created from now on, by this process, its threads (the embedded database's) and its children, is private), the
 * directory is created 0700 if missing, and whatever already lies in it with a group or other bit (a data
 * directory made before, or by hand) loses those bits. Symbolic links are left alone and not followed. Returns how
 * many entries were tightened, for the caller to say so.
 */
export function makeDataDirPrivate(dir: string): number {
  process.umask(PRIVATE_UMASK);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let tightened = 0;
  const visit = (path: string): void => {
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(path);
    } catch (error) {
      // Removed while we walked (a temporary file): nothing to tighten.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    if (stats.isSymbolicLink()) return;
    if (stats.mode & PRIVATE_UMASK) {
      chmodSync(path, stats.mode & 0o7777 & ~PRIVATE_UMASK);
      tightened++;
    }
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return tightened;
}

/** The one log line of a tightening. */
export function tightenedMessage(dir: string, tightened: number): string {
  return `DATA_DIR ${dir} was open to other users: ${tightened} entries made private (directories 0700, files 0600)`;
}
