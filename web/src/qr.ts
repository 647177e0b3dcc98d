import QRCode from 'qrcode';
import { h } from './dom.ts';

/** A QR code drawn on a canvas (no data: URLs, so the page's CSP stays strict), with a text alternative. */
export function qrCanvas(text: string, label: string, size = 192): HTMLCanvasElement {
  const canvas = h('canvas', { role: 'img', 'aria-label': label, class: 'qr', width: size, height: size });
  QRCode.toCanvas(canvas, text, { width: size, margin: 2, errorCorrectionLevel: 'M' }, (error) => {
    if (error) canvas.replaceWith(h('p', { class: 'error' }, 'Could not draw the QR code.'));
  });
  return canvas;
}
