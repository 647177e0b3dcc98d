import { createId } from '@paralleldrive/cuid2';

/** Opaque cuid-style identifier for every resource the API names. */
export function newId(): string {
  return createId();
}

/** The shape of every id `newId` makes (cuid2: a lowercase letter, then up to 31 lowercase letters or digits). */
export const ID_PATTERN = '^[a-z][0-9a-z]{1,31}$';
