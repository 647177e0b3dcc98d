import { createId, isCuid } from '@paralleldrive/cuid2';

/** Opaque cuid-style identifier for every resource the API names. */
export function newId(): string {
  return createId();
}

export function looksLikeId(value: string): boolean {
  return isCuid(value);
}
