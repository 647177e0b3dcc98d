import { Type } from '@sinclair/typebox';
import type { ApiKeyRow } from '../../db/schema/index.ts';
import { NullableTimestamp, Timestamp } from '../../http/envelope.ts';
import { iso } from '../../lib/time.ts';

export const ApiKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    keyPrefix: Type.String({ description: 'svc_sk_ plus the first characters of the key' }),
    lastUsedAt: NullableTimestamp,
    expiresAt: NullableTimestamp,
    revokedAt: NullableTimestamp,
    createdAt: Timestamp,
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);

export function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    keyPrefix: row.keyPrefix,
    lastUsedAt: iso(row.lastUsedAt),
    expiresAt: iso(row.expiresAt),
    revokedAt: iso(row.revokedAt),
    createdAt: iso(row.createdAt),
  };
}
