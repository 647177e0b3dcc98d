/**
 * What a database error says, wherever the driver's error sits in the cause chain (Drizzle wraps it): its SQLSTATE
 * and, for a constraint violation, the constraint's name. The one place that reads driver errors.
 */
export interface DbError {
  /** The five-character SQLSTATE (`23505` unique violation, class `22` data exceptions). */
  sqlState: string;
  constraint?: string;
}

export function parseDbError(error: unknown): DbError | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const { code, constraint } = current as { code?: unknown; constraint?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
      return typeof constraint === 'string' ? { sqlState: code, constraint } : { sqlState: code };
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A unique index refused the row (SQLSTATE 23505): the loser of a race, or a duplicate. */
export function isUniqueViolation(error: unknown): boolean {
  return parseDbError(error)?.sqlState === '23505';
}
