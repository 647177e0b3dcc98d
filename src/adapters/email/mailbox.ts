/**
 * The local mailbox (`SMTP_URL` unset on the `local` and `devnet` networks): nothing leaves the machine, each
 * message is a JSON file under `{dataDir}/mailbox/`, written atomically (temporary file, rename) with mode 0600,
 * named by its id so a repeat of the same message replaces itself. `GET /api/v1/sandbox/mailbox` lists them.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EmailMessage, LocalMailbox, StoredEmail } from './types.ts';

/** Where the local mailbox keeps its messages, their `From:`, and its clock. */
export interface LocalMailboxOptions {
  dataDir: string;
  from: string;
  now?: () => Date;
}

const FILE = /^([0-9a-z]{1,64})\.json$/;

/** A mailbox of files under `{dataDir}/mailbox`: what would have been emailed, readable by a developer or a test. */
export function createLocalMailbox(options: LocalMailboxOptions): LocalMailbox {
  const dir = join(options.dataDir, 'mailbox');
  const now = options.now ?? (() => new Date());
  let ready: Promise<unknown> | null = null;
  const ensureDir = () => {
    ready ??= mkdir(dir, { recursive: true, mode: 0o700 });
    return ready;
  };

  async function read(file: string): Promise<StoredEmail | null> {
    try {
      return JSON.parse(await readFile(join(dir, file), 'utf8')) as StoredEmail;
    } catch (error) {
      // A file removed between the listing and the read is simply not listed.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  return {
    kind: 'mailbox',

    async send(message: EmailMessage): Promise<void> {
      await ensureDir();
      const id =
        message.id && /^[0-9a-z]{1,64}$/.test(message.id) ? message.id : randomBytes(12).toString('hex');
      const stored: StoredEmail = {
        id,
        from: options.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html ?? null,
        receivedAt: now().toISOString(),
      };
      const path = join(dir, `${id}.json`);
      const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
      await rename(temp, path);
    },

    async list(filter = {}): Promise<StoredEmail[]> {
      await ensureDir();
      const files = (await readdir(dir)).filter((file) => FILE.test(file));
      const messages = (await Promise.all(files.map(read))).filter((m): m is StoredEmail => m !== null);
      const to = filter.to?.trim().toLowerCase();
      return messages
        .filter((message) => !to || message.to.toLowerCase() === to)
        .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt) || b.id.localeCompare(a.id))
        .slice(0, filter.limit ?? 100);
    },

    async close(): Promise<void> {},
  };
}
