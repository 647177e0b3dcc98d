/**
 * The opaque `cursor` of the paged lists: base64url of `createdAt,id` of the last row of the previous page. A
 * cursor this service did not make is `400 validation_error`, never a 500 or an empty page.
 */
import type { ListCursor } from '../db/lists.ts';
import { AppError } from '../lib/errors.ts';
import { ID_PATTERN } from '../lib/ids.ts';

const ID = new RegExp(ID_PATTERN);
const BASE64URL = /^[A-Za-z0-9_-]{1,200}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.toISOString()},${row.id}`).toString('base64url');
}

export function decodeCursor(raw: string): ListCursor {
  const [at, id, ...rest] = BASE64URL.test(raw) ? Buffer.from(raw, 'base64url').toString().split(',') : [];
  const createdAt = at && ISO_MS.test(at) ? new Date(at) : null;
  if (!createdAt || Number.isNaN(createdAt.getTime()) || !id || !ID.test(id) || rest.length > 0) {
    throw new AppError('validation_error', 'The request querystring is invalid.', {
      details: [{ path: 'cursor', message: "must be a previous page's nextCursor" }],
    });
  }
  return { createdAt, id };
}

/** The position a list query asks for; `page` and `cursor` together are refused (400), they name two places. */
export function positionOf(query: { page?: number; cursor?: string }) {
  if (query.cursor === undefined) return { page: query.page ?? 1 };
  if (query.page !== undefined) {
    throw new AppError('validation_error', 'The request querystring is invalid.', {
      details: [{ path: 'page', message: 'give page or cursor, not both' }],
    });
  }
  return { after: decodeCursor(query.cursor) };
}

/** The answer's paging fields: the page number (null when reached by cursor) and the next page's cursor. */
export function pageFields<T extends { createdAt: Date; id: string }>(
  position: { page: number } | { after: ListCursor },
  page: { items: T[]; hasMore: boolean },
) {
  const last = page.items[page.items.length - 1];
  return {
    page: 'page' in position ? position.page : null,
    nextCursor: page.hasMore && last ? encodeCursor(last) : null,
  };
}
