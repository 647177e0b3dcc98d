/**
 * The local print sandbox (`LOB_API_KEY` unset on the `local` network): nothing is printed, the letter is
 * kept as files under `{dataDir}/mail/` so a developer can open the exact PDF that would have been mailed:
 *
 *   ltr_local_<id>.pdf     the PDF as submitted
 *   ltr_local_<id>.json    the record (recipient, delivery method, tracking, cancellation)
 *   key-<sha256(key)>      the idempotency index: the providerId accepted for that key
 *
 * A repeat with the same idempotency key, also after a restart, adopts the existing record. The status moves
 * through Lob's vocabulary with the clock (`created`, then `in_transit`, `processed_for_delivery`, and
 * `delivered` on the expected date) and can be cancelled while still `created`, as Lob's cancellation window.
 * Like Lob, it rejects what Lob would reject before printing (`postage_unavailable`): a US address without a
 * ZIP code or state, an over-long name or street line, a file that is not a PDF.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '../../lib/errors.ts';
import { sha256Hex } from '../../lib/secrets.ts';
import {
  addBusinessDays,
  type DeliveryMethod,
  type MailRecipient,
  type MailRequest,
  type MailResult,
  type PrintProvider,
} from './types.ts';

/** Where the local print sandbox keeps its letters, and its clock. */
export interface LocalPrintSandboxOptions {
  dataDir: string;
  now?: () => Date;
}

interface LocalRecord {
  providerId: string;
  letterId: string;
  idempotencyKeyHash: string;
  deliveryMethod: DeliveryMethod;
  isDomestic: boolean;
  to: MailRecipient;
  description: string | null;
  trackingNumber: string | null;
  expectedDeliveryDate: string;
  mailedAt: string;
  cancelledAt: string | null;
  pdfFile: string;
  pdfSha256: string;
  pdfBytes: number;
}

const ID_PATTERN = /^ltr_local_[0-9a-f]{20}$/;

/**
 * A `PrintProvider` that prints nothing: each letter is kept as files under `{dataDir}/mail/` (the PDF as it would
 * have been mailed, and its record), with Lob's statuses, idempotency and refusals, in test mode.
 */
export function createLocalPrintSandbox(options: LocalPrintSandboxOptions): PrintProvider {
  const dir = join(options.dataDir, 'mail');
  const now = options.now ?? (() => new Date());
  let ready: Promise<unknown> | null = null;
  const ensureDir = () => {
    ready ??= mkdir(dir, { recursive: true, mode: 0o700 });
    return ready;
  };

  const recordPath = (providerId: string) => join(dir, `${providerId}.json`);
  const keyPath = (key: string) => join(dir, `key-${sha256Hex(`sealpay-mail:${key}`)}`);

  async function readRecord(providerId: string): Promise<LocalRecord | null> {
    if (!ID_PATTERN.test(providerId)) return null;
    try {
      return JSON.parse(await readFile(recordPath(providerId), 'utf8')) as LocalRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async function writeRecord(record: LocalRecord): Promise<void> {
    const path = recordPath(record.providerId);
    const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, path);
  }

  async function adopted(key: string): Promise<LocalRecord | null> {
    let providerId: string;
    try {
      providerId = (await readFile(keyPath(key), 'utf8')).trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return readRecord(providerId);
  }

  function statusOf(record: LocalRecord, at: Date): string {
    if (record.cancelledAt) return 'cancelled';
    const today = at.toISOString().slice(0, 10);
    if (today >= record.expectedDeliveryDate) return 'delivered';
    const elapsed = at.getTime() - new Date(record.mailedAt).getTime();
    if (elapsed < 24 * 3600_000) return 'created';
    if (addBusinessDays(at, 1) >= record.expectedDeliveryDate) return 'processed_for_delivery';
    return 'in_transit';
  }

  function resultOf(record: LocalRecord): MailResult {
    return {
      provider: 'printer',
      providerId: record.providerId,
      deliveryMethod: record.deliveryMethod,
      status: statusOf(record, now()),
      trackingNumber: record.trackingNumber,
      expectedDeliveryDate: record.expectedDeliveryDate,
      mailedAt: new Date(record.mailedAt),
      testMode: true,
    };
  }

  return {
    name: 'local',
    testMode: true,

    async send(request: MailRequest): Promise<MailResult> {
      await ensureDir();
      const existing = await adopted(request.idempotencyKey);
      if (existing) return resultOf(existing);

      validate(request);
      const providerId = `ltr_local_${randomBytes(10).toString('hex')}`;
      const mailedAt = now();
      const record: LocalRecord = {
        providerId,
        letterId: request.letterId,
        idempotencyKeyHash: sha256Hex(request.idempotencyKey),
        deliveryMethod: request.deliveryMethod,
        isDomestic: request.isDomestic,
        to: request.to,
        description: request.description ?? null,
        trackingNumber: request.deliveryMethod === 'tracked' ? trackingNumber(request.isDomestic) : null,
        expectedDeliveryDate: addBusinessDays(mailedAt, request.isDomestic ? 4 : 10),
        mailedAt: mailedAt.toISOString(),
        cancelledAt: null,
        pdfFile: `${providerId}.pdf`,
        pdfSha256: sha256Hex(request.pdf),
        pdfBytes: request.pdf.length,
      };
      await writeFile(join(dir, record.pdfFile), request.pdf, { mode: 0o600 });
      await writeRecord(record);
      try {
        // The index is written last and exclusively: whoever creates it first owns the key.
        await writeFile(keyPath(request.idempotencyKey), providerId, { flag: 'wx', mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        await Promise.all([
          rm(recordPath(providerId), { force: true }),
          rm(join(dir, record.pdfFile), { force: true }),
        ]);
        const winner = await adopted(request.idempotencyKey);
        if (!winner) throw error;
        return resultOf(winner);
      }
      return resultOf(record);
    },

    async cancel(providerId: string) {
      try {
        const record = await readRecord(providerId);
        if (!record) return { cancelled: false, reason: 'not_found' };
        if (record.cancelledAt) return { cancelled: true };
        const status = statusOf(record, now());
        if (status !== 'created') return { cancelled: false, reason: `already ${status}` };
        await writeRecord({ ...record, cancelledAt: now().toISOString() });
        return { cancelled: true };
      } catch (error) {
        return { cancelled: false, reason: (error as Error).message };
      }
    },

    async refresh(providerId: string): Promise<Partial<MailResult>> {
      const record = await readRecord(providerId);
      if (!record) throw new AppError('upstream_error', `The print sandbox has no letter ${providerId}.`);
      return resultOf(record);
    },
  };
}

/** What Lob refuses before printing, so the sandbox exercises the `postage_unavailable` path too. */
function validate(request: MailRequest): void {
  const reject = (message: string) =>
    new AppError('postage_unavailable', message, { details: { provider: 'local' } });
  const { to } = request;
  if (request.pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
    throw reject('The letter file is not a PDF.');
  if (to.name.trim().length === 0 || to.name.length > 40) {
    throw reject('The recipient name must be 1 to 40 characters for the envelope window.');
  }
  if (to.address.line1.length > 64 || (to.address.line2?.length ?? 0) > 64) {
    throw reject('An address line is longer than 64 characters.');
  }
  if (to.address.country === 'US') {
    if (!to.address.postal || !/^\d{5}(-?\d{4})?$/.test(to.address.postal)) {
      throw reject('A US address needs a valid ZIP code.');
    }
    if (!/^[A-Za-z]{2}$/.test(to.address.region)) throw reject('A US address needs a two-letter state.');
  }
}

/** USPS-shaped numbers: Certified Mail (domestic) or a registered-mail article number (international). */
function trackingNumber(isDomestic: boolean): string {
  const digits = (count: number) => Array.from({ length: count }, () => randomInt(10)).join('');
  return isDomestic ? `9407${digits(18)}` : `RR${digits(9)}US`;
}
