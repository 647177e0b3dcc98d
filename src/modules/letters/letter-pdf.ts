/**
 * The printable letter of value: one page with the recipient's address where a #10 double-window envelope
 * shows it, plain claim instructions, the claim code in large monospace and a QR code of `claimUrl`.
 *
 * What is never printed: the amount and the memo (they stay sealed until the claim). The QR code is drawn
 * here, module by module, from `qrcode`'s matrix: the claim URL never goes to a QR service or to the print
 * provider's QR feature, it only leaves the service inside this PDF.
 *
 * Layout follows the print provider's `address_placement: top_first_page`: the top 3.5 inches of the page
 * hold nothing but the return line and the recipient block, at the positions of a standard #10 double-window
 * envelope (return window from about 0.5 in, recipient window from about 2 in, both 0.6 in from the left).
 * When the provider prints its own address block there, it covers ours; when the letter is printed at home or
 * handed over, ours shows through the window. The rest is kept off the tri-fold lines (3.67 in and 7.33 in).
 *
 * Fonts are PDF's standard 14 (Helvetica, Courier): no font files ship with the service. They encode
 * WinAnsi (Latin-1 plus a few), so other characters are transliterated where Unicode allows it, else `?`.
 */
import PDFDocument from 'pdfkit';
import QRCode from 'qrcode';
import type { MailRecipient } from '../../adapters/mail/types.ts';

export type LetterAddress = MailRecipient['address'];

export interface LetterDocument {
  letterId: string;
  recipient: { name: string; address: LetterAddress };
  /** Who the letter is from, e.g. the sender's name or company. */
  senderLabel: string;
  /** Formatted XXXX-XXXX-…-XXXX (28 characters and 6 dashes). */
  claimCode: string;
  /** `{origin}/claim#{code}` */
  claimUrl: string;
  expiresAt: Date;
  /** Default `LETTER` (the US print provider's paper). */
  pageSize?: 'LETTER' | 'A4';
  /** The PDF's CreationDate (pass the letter's `createdAt` for byte-identical output); default: now. */
  createdAt?: Date;
}

const INCH = 72;
const PAGE_SIZES = { LETTER: [612, 792], A4: [595.28, 841.89] } as const;
/** The country the print provider mails from: addresses there carry no country line. */
const DOMESTIC_COUNTRY = 'US';

const FONT = 'Helvetica';
const FONT_BOLD = 'Helvetica-Bold';
const MONO_BOLD = 'Courier-Bold';
const INK = '#111111';
const MUTED = '#555555';

export async function renderLetterPdf(input: LetterDocument): Promise<Buffer> {
  const [pageWidth, pageHeight] = PAGE_SIZES[input.pageSize ?? 'LETTER'];
  const doc = new PDFDocument({
    size: [pageWidth, pageHeight],
    margin: 0,
    autoFirstPage: true,
    pdfVersion: '1.4',
    info: {
      Title: 'Letter of value',
      Author: 'sealpay',
      Subject: `Letter ${winAnsi(input.letterId)}`,
      Creator: 'sealpay',
      Producer: 'sealpay',
      CreationDate: input.createdAt ?? new Date(),
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = 0.75 * INCH;
  const contentWidth = pageWidth - 2 * left;
  const claimPage = input.claimUrl.split('#')[0] ?? input.claimUrl;
  const expiry = formatDate(input.expiresAt);

  // The envelope windows (top 3.5 in): return line, then the recipient block.
  const windowLeft = 0.6 * INCH;
  const windowWidth = 3.4 * INCH;
  doc
    .font(FONT)
    .fontSize(8)
    .fillColor(MUTED)
    .text(winAnsi(`From ${input.senderLabel}, via sealpay`), windowLeft, 0.62 * INCH, {
      width: windowWidth,
      lineBreak: false,
      ellipsis: true,
    });
  const addressLines = recipientLines(input.recipient);
  doc.font(FONT).fontSize(10).fillColor(INK);
  let y = 1.9 * INCH;
  for (const line of addressLines) {
    doc.text(winAnsi(line), windowLeft, y, { width: windowWidth, lineBreak: false, ellipsis: true });
    y += 12;
  }

  // Heading, below the address area.
  y = 3.75 * INCH;
  doc.font(FONT_BOLD).fontSize(20).fillColor(INK).text('You have received a letter of value', left, y, {
    width: contentWidth,
  });
  y = doc.y + 4;
  doc
    .font(FONT)
    .fontSize(11)
    .fillColor(MUTED)
    .text(winAnsi(`From ${input.senderLabel}`), left, y, { width: contentWidth });

  // Instructions on the left, the QR code on the right.
  const qrSize = 1.9 * INCH;
  const qrX = pageWidth - left - qrSize;
  const qrY = 4.55 * INCH;
  const textWidth = qrX - left - 0.3 * INCH;
  y = qrY;
  doc.font(FONT_BOLD).fontSize(11).fillColor(INK).text('How to claim it', left, y, { width: textWidth });
  y = doc.y + 4;
  const steps = [
    `Go to ${claimPage} and enter the claim code below, or scan the QR code with your phone's camera.`,
    'Sign in, or create an account.',
    'Choose the wallet that should receive the funds.',
    'Claim. The amount is sealed: it is not printed here and is revealed only to you, when you claim.',
  ];
  doc.font(FONT).fontSize(10).fillColor(INK);
  steps.forEach((step, index) => {
    doc.text(`${index + 1}.`, left, y, { width: 14 });
    doc.text(winAnsi(step), left + 16, y, { width: textWidth - 16 });
    y = doc.y + 3;
  });
  doc
    .font(FONT_BOLD)
    .text(winAnsi(`Claim by ${expiry}.`), left, y + 3, { width: textWidth, continued: true })
    .font(FONT)
    .text(' After that the letter expires and the funds return to the sender.');

  drawQr(doc, QRCode.create(input.claimUrl, { errorCorrectionLevel: 'M' }).modules, qrX, qrY, qrSize);
  doc
    .font(FONT)
    .fontSize(8)
    .fillColor(MUTED)
    .text('Scan to claim', qrX, qrY + qrSize + 4, { width: qrSize, align: 'center' });

  // The claim code, large and monospaced, between the second fold and the bottom.
  const boxY = 7.55 * INCH;
  const boxHeight = 1.05 * INCH;
  doc.lineWidth(1.2).strokeColor(INK).roundedRect(left, boxY, contentWidth, boxHeight, 6).stroke();
  doc
    .font(FONT_BOLD)
    .fontSize(9)
    .fillColor(MUTED)
    .text('YOUR CLAIM CODE', left, boxY + 10, { width: contentWidth, align: 'center', characterSpacing: 1 });
  const codeSize = fitFontSize(doc, MONO_BOLD, input.claimCode, contentWidth - 24, 22);
  doc
    .font(MONO_BOLD)
    .fontSize(codeSize)
    .fillColor(INK)
    .text(winAnsi(input.claimCode), left, boxY + 28, {
      width: contentWidth,
      align: 'center',
      lineBreak: false,
    });
  doc
    .font(FONT)
    .fontSize(8)
    .fillColor(MUTED)
    .text(winAnsi(input.claimUrl), left, boxY + boxHeight - 18, {
      width: contentWidth,
      align: 'center',
      lineBreak: false,
    });

  y = boxY + boxHeight + 0.2 * INCH;
  doc
    .font(FONT)
    .fontSize(9)
    .fillColor(INK)
    .text(
      'Keep this letter private: anyone who has the claim code can claim it, and it can be claimed only once. ' +
        'Nobody from sealpay will ever ask you for the code by phone or email.',
      left,
      y,
      { width: contentWidth },
    );
  doc
    .fontSize(7)
    .fillColor(MUTED)
    .text(winAnsi(`Reference ${input.letterId}`), left, pageHeight - 0.75 * INCH, {
      width: contentWidth,
      lineBreak: false,
    });

  doc.end();
  return finished;
}

/** The recipient block as it shows through the window: name, street lines, city line, country abroad. */
export function recipientLines(recipient: LetterDocument['recipient']): string[] {
  const { address } = recipient;
  const cityLine = [address.city, [address.region, address.postal].filter(Boolean).join(' ')]
    .filter((part) => part.length > 0)
    .join(', ');
  return [
    recipient.name,
    address.line1,
    address.line2,
    address.landmark,
    cityLine,
    address.country === DOMESTIC_COUNTRY ? null : address.countryName.toUpperCase(),
  ].filter((line): line is string => typeof line === 'string' && line.trim().length > 0);
}

function drawQr(
  doc: PDFKit.PDFDocument,
  modules: QRCode.BitMatrix,
  x: number,
  y: number,
  size: number,
): void {
  const quiet = 4;
  const cell = size / (modules.size + 2 * quiet);
  doc.save().rect(x, y, size, size).fill('#ffffff');
  for (let row = 0; row < modules.size; row++) {
    let col = 0;
    while (col < modules.size) {
      if (!modules.get(row, col)) {
        col++;
        continue;
      }
      const start = col;
      while (col < modules.size && modules.get(row, col)) col++;
      // Runs of dark modules as one rectangle; a hair of overlap avoids seams in some renderers.
      doc.rect(x + (quiet + start) * cell, y + (quiet + row) * cell, (col - start) * cell, cell + 0.01);
    }
  }
  doc.fill('#000000').restore();
}

function fitFontSize(
  doc: PDFKit.PDFDocument,
  font: string,
  text: string,
  width: number,
  max: number,
): number {
  doc.font(font).fontSize(max);
  const measured = doc.widthOfString(text);
  return measured <= width ? max : Math.floor((max * width) / measured);
}

function formatDate(date: Date): string {
  return `${date.toLocaleDateString('en-US', { timeZone: 'UTC', year: 'numeric', month: 'long', day: 'numeric' })} (UTC)`;
}

/** Characters the standard fonts can show (WinAnsi): strip accents where that helps, else `?`. */
const WIN_ANSI_EXTRA = new Set([...'€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ']);
function winAnsi(text: string): string {
  let out = '';
  for (const char of text.normalize('NFC')) {
    const code = char.codePointAt(0) ?? 0;
    if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(char)) {
      out += char;
      continue;
    }
    const base = char.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    out += base.length > 0 && [...base].every((c) => (c.codePointAt(0) ?? 0) <= 0xff) ? base : '?';
  }
  return out;
}
