import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../lib/errors.ts';
import { createPrintProvider, type MailRequest, type PrintProvider } from './index.ts';

const PDF = Buffer.from('%PDF-1.4\n% a letter of value\n%%EOF\n');
const DAY = 24 * 3600_000;

function request(overrides: Partial<MailRequest> = {}): MailRequest {
  return {
    letterId: 'cm9locallettertest00000001',
    idempotencyKey: 'letter-mail:cm9locallettertest00000001:standard',
    pdf: PDF,
    deliveryMethod: 'standard',
    isDomestic: true,
    to: {
      name: 'Ada Lovelace',
      address: {
        line1: '12 Analytical Way',
        line2: null,
        landmark: null,
        city: 'Portland',
        region: 'OR',
        postal: '97201',
        country: 'US',
        countryName: 'United States',
      },
    },
    ...overrides,
  };
}

describe('local print sandbox', () => {
  let dataDir: string;
  let clock: Date;
  let sandbox: PrintProvider;
  const open = () => {
    const provider = createPrintProvider({ network: 'local', lobApiKey: null, dataDir, now: () => clock });
    if (!provider) throw new Error('expected the local sandbox');
    return provider;
  };

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mail-sandbox-'));
    clock = new Date('2026-03-02T15:00:00.000Z'); // a Monday
    sandbox = open();
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is what LOB_API_KEY unset on local gives, and nothing elsewhere', () => {
    expect(sandbox.name).toBe('local');
    expect(sandbox.testMode).toBe(true);
    expect(createPrintProvider({ network: 'sepolia', lobApiKey: null, dataDir })).toBeNull();
    expect(createPrintProvider({ network: 'mainnet', lobApiKey: '  ', dataDir })).toBeNull();
    expect(createPrintProvider({ network: 'local', lobApiKey: 'test_x', dataDir })?.name).toBe('lob');
  });

  it('keeps the PDF and a record under dataDir/mail and answers like Lob', async () => {
    const result = await sandbox.send(request());
    expect(result).toEqual({
      provider: 'printer',
      providerId: expect.stringMatching(/^ltr_local_[0-9a-f]{20}$/),
      deliveryMethod: 'standard',
      status: 'created',
      trackingNumber: null,
      expectedDeliveryDate: '2026-03-06',
      mailedAt: clock,
      testMode: true,
    });
    const files = (await readdir(join(dataDir, 'mail'))).sort();
    expect(files).toHaveLength(3);
    expect(await readFile(join(dataDir, 'mail', `${result.providerId}.pdf`))).toEqual(PDF);
    const record = JSON.parse(await readFile(join(dataDir, 'mail', `${result.providerId}.json`), 'utf8'));
    expect(record).toMatchObject({ letterId: 'cm9locallettertest00000001', deliveryMethod: 'standard' });
    expect(JSON.stringify(record)).not.toContain('letter-mail:'); // the key is kept hashed
  });

  it('adopts the accepted letter on a retry with the same key, also after a restart and under a race', async () => {
    const first = await sandbox.send(request());
    const retry = await sandbox.send(request());
    expect(retry.providerId).toBe(first.providerId);
    expect(retry.mailedAt).toEqual(first.mailedAt);

    clock = new Date(clock.getTime() + 3 * DAY);
    const restarted = open();
    expect((await restarted.send(request())).providerId).toBe(first.providerId);

    const key = 'letter-mail:race:tracked';
    const raced = await Promise.all(
      Array.from({ length: 6 }, () =>
        restarted.send(request({ idempotencyKey: key, deliveryMethod: 'tracked' })),
      ),
    );
    expect(new Set(raced.map((result) => result.providerId)).size).toBe(1);
    expect(new Set(raced.map((result) => result.trackingNumber)).size).toBe(1);
    const pdfs = (await readdir(join(dataDir, 'mail'))).filter((name) => name.endsWith('.pdf'));
    expect(pdfs).toHaveLength(2);
  });

  it('tracks certified (domestic) and registered (international) letters', async () => {
    const domestic = await sandbox.send(request({ idempotencyKey: 'k-dom', deliveryMethod: 'tracked' }));
    expect(domestic.deliveryMethod).toBe('tracked');
    expect(domestic.trackingNumber).toMatch(/^9407\d{18}$/);
    const abroad = await sandbox.send(
      request({
        idempotencyKey: 'k-intl',
        deliveryMethod: 'tracked',
        isDomestic: false,
        to: {
          name: 'Grace Hopper',
          address: {
            line1: 'Kungsgatan 2',
            line2: null,
            landmark: 'By the fountain',
            city: 'Stockholm',
            region: 'Stockholm',
            postal: null,
            country: 'SE',
            countryName: 'Sweden',
          },
        },
      }),
    );
    expect(abroad.trackingNumber).toMatch(/^RR\d{9}US$/);
    expect(abroad.expectedDeliveryDate).toBe('2026-03-16');
  });

  it('moves through Lob statuses with the clock on refresh', async () => {
    const { providerId } = await sandbox.send(request());
    expect((await sandbox.refresh(providerId)).status).toBe('created');
    clock = new Date('2026-03-03T16:00:00.000Z');
    expect((await sandbox.refresh(providerId)).status).toBe('in_transit');
    clock = new Date('2026-03-05T16:00:00.000Z');
    expect((await sandbox.refresh(providerId)).status).toBe('processed_for_delivery');
    clock = new Date('2026-03-06T09:00:00.000Z');
    const delivered = await sandbox.refresh(providerId);
    expect(delivered).toMatchObject({ status: 'delivered', expectedDeliveryDate: '2026-03-06' });
    await expect(sandbox.refresh('ltr_local_00000000000000000000')).rejects.toMatchObject({
      code: 'upstream_error',
    });
  });

  it('cancels within the window only, and remembers it', async () => {
    const { providerId } = await sandbox.send(request());
    expect(await sandbox.cancel(providerId)).toEqual({ cancelled: true });
    expect(await open().cancel(providerId)).toEqual({ cancelled: true });
    expect((await open().refresh(providerId)).status).toBe('cancelled');

    const late = await sandbox.send(request({ idempotencyKey: 'late' }));
    clock = new Date(clock.getTime() + 2 * DAY);
    expect(await sandbox.cancel(late.providerId)).toEqual({ cancelled: false, reason: 'already in_transit' });
    expect(await sandbox.cancel('ltr_nope')).toEqual({ cancelled: false, reason: 'not_found' });
  });

  it('rejects what Lob would reject, as postage_unavailable, and records nothing', async () => {
    const noZip = request({ idempotencyKey: 'no-zip' });
    noZip.to = { ...noZip.to, address: { ...noZip.to.address, postal: null } };
    const error = await sandbox.send(noZip).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'postage_unavailable', status: 422 });
    await expect(
      sandbox.send(request({ idempotencyKey: 'html', pdf: Buffer.from('<html></html>') })),
    ).rejects.toMatchObject({
      code: 'postage_unavailable',
    });
    const files = await readdir(join(dataDir, 'mail'));
    expect(files).toHaveLength(0);
  });
});
