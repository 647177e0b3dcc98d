/**
 * The printable letter, checked the way a reader would: poppler's `pdfinfo` (one page of the right size),
 * `pdftotext` (code and name printed, no amount, no memo) and `pdftoppm` at 150 dpi with jsQR decoding the QR
 * code from the rasterized page. CI installs poppler-utils (.ci/run).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LetterDocument, recipientLines, renderLetterPdf } from './letter-pdf.ts';

const run = promisify(execFile);
type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ?? jsQRModule) as unknown as Decode;

const CODE = 'K7QD-2M9X-PRTB-V4HN-ZC8W-E6YJ-30FS';
const LETTER: LetterDocument = {
  letterId: 'cm9letterpdftest0000000001',
  recipient: {
    name: 'Marguerite Okonkwo-Laurent',
    address: {
      line1: '742 Evergreen Terrace',
      line2: 'Unit 3B',
      landmark: null,
      city: 'Springfield',
      region: 'OR',
      postal: '97477',
      country: 'US',
      countryName: 'United States',
    },
  },
  senderLabel: 'Northwind Traders',
  claimCode: CODE,
  claimUrl: `https://pay.example.com/claim#${CODE}`,
  expiresAt: new Date('2026-09-30T23:59:59.000Z'),
  createdAt: new Date('2026-07-02T10:00:00.000Z'),
};
/** What the letter row also knows and must never print (passed in as a careless caller might). */
const SECRET_AMOUNT = '1234.56';
const SECRET_MEMO = 'For the roof repairs, love Aunt Bea';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'letter-pdf-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writePdf(name: string, pdf: Buffer): Promise<string> {
  const path = join(dir, `${name}.pdf`);
  await writeFile(path, pdf);
  return path;
}

/** Rasterizes page 1 as 8-bit grey (PGM), then widens it to the RGBA jsQR reads. */
async function rasterize(
  path: string,
  dpi: number,
): Promise<{ rgba: Uint8ClampedArray; width: number; height: number }> {
  const prefix = join(dir, `raster-${dpi}`);
  await run('pdftoppm', ['-r', String(dpi), '-gray', '-singlefile', path, prefix]);
  const pgm = await readFile(`${prefix}.pgm`);
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 64).toString('latin1'));
  if (!header) throw new Error('pdftoppm did not write a binary PGM');
  const width = Number(header[1]);
  const height = Number(header[2]);
  const pixels = pgm.subarray(header[0].length);
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const value = pixels[i] ?? 255;
    rgba[i * 4] = value;
    rgba[i * 4 + 1] = value;
    rgba[i * 4 + 2] = value;
    rgba[i * 4 + 3] = 255;
  }
  return { rgba, width, height };
}

describe('renderLetterPdf', () => {
  let pdf: Buffer;
  let path: string;
  beforeAll(async () => {
    const careless = { ...LETTER, amount: SECRET_AMOUNT, memo: SECRET_MEMO };
    pdf = await renderLetterPdf(careless);
    path = await writePdf('letter', pdf);
  });

  it('is a one-page US Letter PDF a standard viewer opens', async () => {
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const { stdout } = await run('pdfinfo', [path]);
    expect(stdout).toMatch(/^Pages:\s+1$/m);
    expect(stdout).toMatch(/^Page size:\s+612 x 792 pts/m);
    expect(stdout).toMatch(/^CreationDate:.*2026/m);
    expect(stdout).not.toContain(CODE);
  });

  it('prints the claim code, the recipient and the expiry, never an amount or the memo', async () => {
    const { stdout: text } = await run('pdftotext', ['-layout', path, '-']);
    expect(text).toContain(CODE);
    expect(text).toContain(LETTER.recipient.name);
    expect(text).toContain('742 Evergreen Terrace');
    expect(text).toContain('Springfield, OR 97477');
    expect(text).toContain('Northwind Traders');
    expect(text).toContain('September 30, 2026');
    expect(text).toContain('https://pay.example.com/claim');
    expect(text).not.toContain(SECRET_AMOUNT);
    expect(text).not.toContain('1,234');
    expect(text).not.toContain('Aunt Bea');
    expect(text).not.toMatch(/\d+\.\d{2}\b/);
    // Nothing readable in the raw bytes either (content streams are compressed; metadata is not).
    expect(pdf.toString('latin1')).not.toContain(SECRET_AMOUNT);
  });

  it('carries a QR code that decodes to exactly the claim URL', async () => {
    const { rgba, width, height } = await rasterize(path, 150);
    const found = jsQR(rgba, width, height);
    expect(found?.data).toBe(LETTER.claimUrl);
  });

  it('is byte-identical for the same input (deterministic metadata)', async () => {
    const again = await renderLetterPdf(LETTER);
    const twice = await renderLetterPdf(LETTER);
    expect(Buffer.compare(again, twice)).toBe(0);
  });

  it('renders A4 on request, and names the country abroad', async () => {
    const abroad: LetterDocument = {
      ...LETTER,
      pageSize: 'A4',
      recipient: {
        name: 'Zoë Ångström 東京',
        address: {
          line1: 'Drottninggatan 1',
          line2: null,
          landmark: 'Next to the station',
          city: 'Stockholm',
          region: 'Stockholm',
          postal: '111 51',
          country: 'SE',
          countryName: 'Sweden',
        },
      },
    };
    const a4 = await writePdf('a4', await renderLetterPdf(abroad));
    const { stdout: info } = await run('pdfinfo', [a4]);
    expect(info).toMatch(/^Pages:\s+1$/m);
    expect(info).toMatch(/^Page size:\s+595\.2\d? x 841\.8\d? pts/m);
    const { stdout: text } = await run('pdftotext', [a4, '-']);
    expect(text).toContain('Zoë Ångström');
    expect(text).toContain('SWEDEN');
    const { rgba, width, height } = await rasterize(a4, 150);
    expect(jsQR(rgba, width, height)?.data).toBe(LETTER.claimUrl);
  });

  it('lays out the window block without blanks and without the home country', () => {
    expect(recipientLines(LETTER.recipient)).toEqual([
      'Marguerite Okonkwo-Laurent',
      '742 Evergreen Terrace',
      'Unit 3B',
      'Springfield, OR 97477',
    ]);
  });
});
