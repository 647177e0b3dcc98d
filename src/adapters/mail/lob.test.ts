/**
 * The Lob adapter against a local server that speaks Lob's letters API (no internet): it records every request
 * (method, path, headers, multipart fields) and answers like Lob, including its 24-hour `Idempotency-Key`
 * replay and the metadata filter of the list endpoint.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REFUSING_PORT } from '../../../test/faults/service.ts';
import { AppError } from '../../lib/errors.ts';
import { createPrintProvider, type MailRequest, type PrintProvider, type SenderAddress } from './index.ts';

const API_KEY = 'test_0123456789abcdef';
const CODE = 'K7QD-2M9X-PRTB-V4HN-ZC8W-E6YJ-30FS';
const CLAIM_URL = `https://pay.example.com/claim#${CODE}`;
/** A stand-in PDF whose bytes carry the code in clear, so the test can tell where the code travels. */
const PDF = Buffer.from(`%PDF-1.4\n(${CODE}) Tj\n(${CLAIM_URL}) Tj\n%%EOF\n`, 'latin1');
const SENDER: SenderAddress = {
  name: 'Sealpay Mailroom',
  company: 'Sealpay Inc',
  line1: '185 Berry St',
  line2: 'Suite 6100',
  city: 'San Francisco',
  region: 'CA',
  postal: '94107',
  country: 'US',
};

interface Part {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Buffer;
}
interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  raw: Buffer;
  parts: Part[];
}
interface StoredLetter {
  id: string;
  date_created: string;
  expected_delivery_date: string;
  tracking_number: string | null;
  tracking_events: { name: string; time: string }[];
  extra_service: string | null;
  metadata: Record<string, string>;
  deleted?: boolean;
}

function parseMultipart(raw: Buffer, contentType: string | undefined): Part[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType ?? '');
  if (!boundary) return [];
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  const parts: Part[] = [];
  for (const chunk of raw.toString('latin1').split(delimiter).slice(1)) {
    if (chunk.startsWith('--')) break;
    const [head = '', ...rest] = chunk.replace(/^\r\n/, '').split('\r\n\r\n');
    const body = rest.join('\r\n\r\n').replace(/\r\n$/, '');
    parts.push({
      name: /name="([^"]*)"/.exec(head)?.[1] ?? '',
      filename: /filename="([^"]*)"/.exec(head)?.[1] ?? null,
      contentType: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? null,
      data: Buffer.from(body, 'latin1'),
    });
  }
  return parts;
}

/** Lob, as far as these tests need it. */
class FakeLob {
  requests: Recorded[] = [];
  letters = new Map<string, StoredLetter>();
  idempotency = new Map<string, string>();
  /** What the next POST /letters answers instead of creating a letter. */
  failNextCreate: { status: number; body: unknown } | null = null;
  listLags = false;
  private server: Server | null = null;
  private counter = 0;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const url = new URL(req.url ?? '/', 'http://lob.test');
        const recorded: Recorded = {
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          raw,
          parts: parseMultipart(raw, req.headers['content-type']),
        };
        this.requests.push(recorded);
        const [status, body] = this.answer(recorded);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private answer(request: Recorded): [number, unknown] {
    const expected = `Basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`;
    if (request.headers.authorization !== expected) {
      return [
        401,
        { error: { message: 'Your API key is not valid.', status_code: 401, code: 'unauthorized' } },
      ];
    }
    const byId = /^\/v1\/letters\/([^/]+)$/.exec(request.path);
    if (request.method === 'GET' && request.path === '/v1/letters') {
      const filters = [...request.query.entries()].filter(([key]) => key.startsWith('metadata['));
      const data = this.listLags
        ? []
        : [...this.letters.values()].filter((letter) =>
            filters.every(([key, value]) => letter.metadata[key.slice(9, -1)] === value),
          );
      return [200, { data, object: 'list', count: data.length }];
    }
    if (request.method === 'POST' && request.path === '/v1/letters') {
      const key = String(request.headers['idempotency-key'] ?? '');
      const replay = key ? this.idempotency.get(key) : undefined;
      if (replay) return [200, this.letters.get(replay)];
      if (this.failNextCreate) {
        const { status, body } = this.failNextCreate;
        this.failNextCreate = null;
        return [status, body];
      }
      const field = (name: string) => request.parts.find((part) => part.name === name)?.data.toString('utf8');
      const metadata: Record<string, string> = {};
      for (const part of request.parts) {
        const match = /^metadata\[(.+)\]$/.exec(part.name);
        if (match?.[1]) metadata[match[1]] = part.data.toString('utf8');
      }
      const extra = field('extra_service') ?? null;
      const letter: StoredLetter = {
        id: `ltr_${(++this.counter).toString(16).padStart(16, '0')}`,
        date_created: '2026-03-02T15:00:01.123Z',
        expected_delivery_date: '2026-03-06',
        tracking_number: extra ? (extra === 'certified' ? '9407111899560000000001' : 'RR123456785US') : null,
        tracking_events: [],
        extra_service: extra,
        metadata,
      };
      this.letters.set(letter.id, letter);
      if (key) this.idempotency.set(key, letter.id);
      return [200, letter];
    }
    if (byId) {
      const letter = this.letters.get(byId[1] ?? '');
      if (!letter)
        return [404, { error: { message: 'letter not found', status_code: 404, code: 'not_found' } }];
      if (request.method === 'GET') return [200, letter];
      if (request.method === 'DELETE') {
        if (letter.tracking_events.length > 0) {
          return [
            422,
            {
              error: {
                message: 'This letter has already been sent.',
                status_code: 422,
                code: 'not_deletable',
              },
            },
          ];
        }
        letter.deleted = true;
        return [200, { id: letter.id, deleted: true, object: 'letter_deleted' }];
      }
    }
    return [
      404,
      { error: { message: 'unrecognized endpoint', status_code: 404, code: 'unrecognized_endpoint' } },
    ];
  }
}

function mailRequest(overrides: Partial<MailRequest> = {}): MailRequest {
  return {
    letterId: 'cm9loblettertest000000001',
    idempotencyKey: 'letter-mail:cm9loblettertest000000001:standard',
    pdf: PDF,
    deliveryMethod: 'standard',
    isDomestic: true,
    to: {
      name: 'Ada Lovelace',
      address: {
        line1: '12 Analytical Way',
        line2: 'Floor 2',
        landmark: 'Blue door',
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

describe('Lob print provider', () => {
  const lob = new FakeLob();
  let baseUrl: string;
  let provider: PrintProvider;
  const creates = () => lob.requests.filter((request) => request.method === 'POST');

  beforeAll(async () => {
    baseUrl = await lob.start();
  });
  afterAll(async () => {
    await lob.stop();
  });
  beforeEach(() => {
    lob.requests = [];
    lob.letters.clear();
    lob.idempotency.clear();
    lob.listLags = false;
    const created = createPrintProvider({
      network: 'sepolia',
      lobApiKey: API_KEY,
      dataDir: '/nonexistent',
      sender: SENDER,
      lobBaseUrl: baseUrl,
    });
    if (!created) throw new Error('expected the Lob provider');
    provider = created;
  });

  it('uploads the PDF with the letter fields, the idempotency key and basic auth', async () => {
    expect(provider).toMatchObject({ name: 'lob', testMode: true });
    const request = mailRequest({ description: 'Letter for Ada' });
    const result = await provider.send(request);

    const post = creates()[0];
    expect(creates()).toHaveLength(1);
    expect(post?.path).toBe('/v1/letters');
    expect(post?.headers['idempotency-key']).toBe(request.idempotencyKey);
    expect(post?.headers.authorization).toBe(`Basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`);
    expect(post?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const fields = Object.fromEntries(
      (post?.parts ?? [])
        .filter((part) => part.filename === null)
        .map((part) => [part.name, part.data.toString('utf8')]),
    );
    expect(fields).toEqual({
      'to[name]': 'Ada Lovelace',
      'to[address_line1]': '12 Analytical Way',
      'to[address_line2]': 'Floor 2, Blue door',
      'to[address_city]': 'Portland',
      'to[address_state]': 'OR',
      'to[address_zip]': '97201',
      'to[address_country]': 'US',
      'from[name]': 'Sealpay Mailroom',
      'from[company]': 'Sealpay Inc',
      'from[address_line1]': '185 Berry St',
      'from[address_line2]': 'Suite 6100',
      'from[address_city]': 'San Francisco',
      'from[address_state]': 'CA',
      'from[address_zip]': '94107',
      'from[address_country]': 'US',
      description: 'Letter for Ada',
      color: 'false',
      double_sided: 'false',
      address_placement: 'top_first_page',
      mail_type: 'usps_first_class',
      use_type: 'operational',
      'metadata[sealpay_letter_id]': request.letterId,
      'metadata[sealpay_mail_key]': expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    const file = post?.parts.find((part) => part.name === 'file');
    expect(file).toMatchObject({ filename: `${request.letterId}.pdf`, contentType: 'application/pdf' });
    expect(file?.data).toEqual(PDF);

    expect(result).toEqual({
      provider: 'printer',
      providerId: 'ltr_0000000000000001',
      deliveryMethod: 'standard',
      status: 'created',
      trackingNumber: null,
      expectedDeliveryDate: '2026-03-06',
      mailedAt: new Date('2026-03-02T15:00:01.123Z'),
      testMode: true,
    });
  });

  it('never sends the claim code or claim URL outside the file', async () => {
    await provider.send(mailRequest({ description: `Claim code ${CODE} for ${CLAIM_URL}` }));
    const compact = CODE.replace(/-/g, '');
    for (const request of lob.requests) {
      const file = request.parts.find((part) => part.name === 'file');
      const outside = file
        ? request.raw.toString('latin1').replace(file.data.toString('latin1'), '')
        : request.raw.toString('latin1');
      const wire = `${request.method} ${request.path}?${request.query} ${JSON.stringify(request.headers)} ${outside}`;
      for (const secret of [CODE, compact, CLAIM_URL, 'claim#']) expect(wire).not.toContain(secret);
      for (const part of request.parts) expect(part.name).not.toMatch(/merge_variables|qr_code/);
    }
    const post = creates()[0];
    expect(post?.parts.find((part) => part.name === 'description')?.data.toString()).toBe(
      'sealpay letter cm9loblettertest000000001',
    );
    expect(post?.raw.includes(Buffer.from(CODE))).toBe(true); // inside the PDF, and only there
  });

  it('asks for certified mail at home and registered mail abroad when tracked', async () => {
    const domestic = await provider.send(mailRequest({ idempotencyKey: 'k-dom', deliveryMethod: 'tracked' }));
    expect(domestic).toMatchObject({ deliveryMethod: 'tracked', trackingNumber: '9407111899560000000001' });
    const abroad = await provider.send(
      mailRequest({ idempotencyKey: 'k-intl', deliveryMethod: 'tracked', isDomestic: false }),
    );
    expect(abroad.trackingNumber).toBe('RR123456785US');
    const services = creates().map((post) =>
      post.parts.find((part) => part.name === 'extra_service')?.data.toString(),
    );
    expect(services).toEqual(['certified', 'registered']);
  });

  it('adopts the accepted letter on a retry instead of mailing a second copy', async () => {
    const first = await provider.send(mailRequest());
    // Within the day: the list finds it by metadata, so no second POST at all.
    expect((await provider.send(mailRequest())).providerId).toBe(first.providerId);
    expect(creates()).toHaveLength(1);
    // When the list lags, Lob's Idempotency-Key replay returns the same letter.
    lob.listLags = true;
    expect((await provider.send(mailRequest())).providerId).toBe(first.providerId);
    expect(creates()).toHaveLength(2);
    expect(lob.letters.size).toBe(1);
    // Past Lob's 24-hour idempotency window: the metadata lookup still adopts it.
    lob.listLags = false;
    lob.idempotency.clear();
    expect((await provider.send(mailRequest())).providerId).toBe(first.providerId);
    expect(lob.letters.size).toBe(1);
    // A different key is a different mailing.
    expect((await provider.send(mailRequest({ idempotencyKey: 'other' }))).providerId).not.toBe(
      first.providerId,
    );
  });

  it('turns a rejection into postage_unavailable with Lob’s message', async () => {
    lob.failNextCreate = {
      status: 422,
      body: {
        error: { message: 'address_zip is required for US addresses', status_code: 422, code: 'invalid' },
      },
    };
    const error = await provider.send(mailRequest()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: 'postage_unavailable',
      status: 422,
      message: 'address_zip is required for US addresses',
      details: { provider: 'lob', providerStatus: 422, providerCode: 'invalid' },
    });
  });

  it('turns a provider failure or a network fault into a retryable upstream_error', async () => {
    lob.failNextCreate = {
      status: 500,
      body: { error: { message: 'internal error', status_code: 500, code: 'internal_server_error' } },
    };
    await expect(provider.send(mailRequest())).rejects.toMatchObject({
      code: 'upstream_error',
      status: 502,
      retryable: true,
      details: { providerStatus: 500 },
    });
    // The retry with the same key then goes through.
    expect((await provider.send(mailRequest())).providerId).toMatch(/^ltr_/);

    const unreachable = createPrintProvider({
      network: 'mainnet',
      lobApiKey: 'live_0123',
      dataDir: '/nonexistent',
      sender: SENDER,
      lobBaseUrl: `http://127.0.0.1:${REFUSING_PORT}/v1`,
    });
    expect(unreachable?.testMode).toBe(false);
    await expect(unreachable?.send(mailRequest())).rejects.toMatchObject({
      code: 'upstream_error',
      retryable: true,
      details: { provider: 'lob' },
    });
  });

  it('reports a refused key or a missing return address as mail_provider_not_configured', async () => {
    const wrongKey = createPrintProvider({
      network: 'sepolia',
      lobApiKey: 'test_wrong',
      dataDir: '/nonexistent',
      sender: SENDER,
      lobBaseUrl: baseUrl,
    });
    await expect(wrongKey?.send(mailRequest())).rejects.toMatchObject({
      code: 'mail_provider_not_configured',
    });
    const noSender = createPrintProvider({
      network: 'sepolia',
      lobApiKey: API_KEY,
      dataDir: '/x',
      lobBaseUrl: baseUrl,
    });
    await expect(noSender?.send(mailRequest())).rejects.toMatchObject({
      code: 'mail_provider_not_configured',
      status: 503,
    });
  });

  it('cancels with DELETE, best effort, and refreshes status and tracking', async () => {
    const first = await provider.send(mailRequest({ deliveryMethod: 'tracked' }));
    expect(await provider.cancel(first.providerId)).toEqual({ cancelled: true });
    const deletion = lob.requests.find((request) => request.method === 'DELETE');
    expect(deletion?.path).toBe(`/v1/letters/${first.providerId}`);
    expect(await provider.refresh(first.providerId)).toMatchObject({ status: 'cancelled' });

    const second = await provider.send(mailRequest({ idempotencyKey: 'second', deliveryMethod: 'tracked' }));
    const stored = lob.letters.get(second.providerId);
    stored?.tracking_events.push(
      { name: 'Processed for Delivery', time: '2026-03-05T08:00:00.000Z' },
      { name: 'In Transit', time: '2026-03-03T08:00:00.000Z' },
    );
    expect(await provider.refresh(second.providerId)).toEqual({
      status: 'processed_for_delivery',
      trackingNumber: '9407111899560000000001',
      expectedDeliveryDate: '2026-03-06',
    });
    const tooLate = await provider.cancel(second.providerId);
    expect(tooLate).toEqual({ cancelled: false, reason: 'This letter has already been sent.' });
    expect(await provider.cancel('ltr_missing')).toMatchObject({ cancelled: false });
    await expect(provider.refresh('ltr_missing')).rejects.toMatchObject({ code: 'upstream_error' });
  });
});
