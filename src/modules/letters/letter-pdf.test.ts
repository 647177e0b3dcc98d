/**
 * The printable letter, checked the way a reader would, with Mozilla's PDF.js (the viewer inside Firefox):
 * it opens the document (one page of the right size), extracts its text (code and name printed, no amount, no
 * memo), and renders the page at 150 dpi onto a canvas from which jsQR decodes the QR code. Everything comes
 * from npm: no system PDF tools needed.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createCanvas } from '@napi-rs/canvas';
import jsQRModule from 'jsqr';
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type LetterDocument, recipientLines, renderLetterPdf } from './letter-pdf.ts';

type Decode = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR = ((jsQRModule as unknown as { default?: Decode }).default ?? jsQRModule) as unknown as Decode;
/** PDF.js draws the 14 standard PDF fonts from these files (the letter uses Helvetica and Courier). */
const STANDARD_FONTS = `${join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`;

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

function open(pdf: Buffer): Promise<PDFDocumentProxy> {
  return getDocument({ data: new Uint8Array(pdf), standardFontDataUrl: STANDARD_FONTS, verbosity: 0 })
    .promise;
}

/** Page 1's size in points, as a viewer reports it. */
async function pageSize(document: PDFDocumentProxy): Promise<{ width: number; height: number }> {
  const page = await document.getPage(1);
  const [x0, y0, x1, y1] = page.view as [number, number, number, number];
  return { width: x1 - x0, height: y1 - y0 };
}

/** The text of page 1, a line per text run that ends a line. */
async function textOf(document: PDFDocumentProxy): Promise<string> {
  const page = await document.getPage(1);
  const content = await page.getTextContent();
  return content.items
    .map((item) => ('str' in item ? `${item.str}${item.hasEOL ? '\n' : ' '}` : ''))
    .join('');
}

/** Renders page 1 at `dpi` onto a canvas and returns its RGBA pixels, as jsQR reads them. */
async function rasterize(
  document: PDFDocumentProxy,
  dpi: number,
): Promise<{ rgba: Uint8ClampedArray; width: number; height: number }> {
  const page = await document.getPage(1);
  const viewport = page.getViewport({ scale: dpi / 72 });
  const width = Math.ceil(viewport.width);
  const height = Math.ceil(viewport.height);
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  await page.render({
    canvas: canvas as unknown as HTMLCanvasElement,
    canvasContext: context as never,
    viewport,
  }).promise;
  return { rgba: new Uint8ClampedArray(context.getImageData(0, 0, width, height).data), width, height };
}

describe('renderLetterPdf', () => {
  let pdf: Buffer;
  let document: PDFDocumentProxy;
  beforeAll(async () => {
    const careless = { ...LETTER, amount: SECRET_AMOUNT, memo: SECRET_MEMO };
    pdf = await renderLetterPdf(careless);
    document = await open(pdf);
  });

  it('is a one-page US Letter PDF a standard viewer opens', async () => {
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(document.numPages).toBe(1);
    expect(await pageSize(document)).toEqual({ width: 612, height: 792 });
    const { info } = await document.getMetadata();
    expect((info as { CreationDate?: string }).CreationDate).toMatch(/^D:2026/);
    expect(JSON.stringify(info)).not.toContain(CODE);
  });

  it('prints the claim code, the recipient and the expiry, never an amount or the memo', async () => {
    const text = await textOf(document);
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
    const { rgba, width, height } = await rasterize(document, 150);
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
    const a4 = await open(await renderLetterPdf(abroad));
    expect(a4.numPages).toBe(1);
    const size = await pageSize(a4);
    expect(size.width).toBeCloseTo(595.28, 1);
    expect(size.height).toBeCloseTo(841.89, 1);
    const text = await textOf(a4);
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
