/**
 * The error answers a test run records, so that it can tell which documented codes no test produced (issue 36 item
 * 15; `test/documented-errors.setup.ts`). Off unless the run sets `SEALPAY_ERROR_RECORD_DIR`: then `sendError`,
 * the one place an error becomes an answer, appends `operationId status code source` to a file of this process in
 * that directory (`source`: the test file that caused it, `SEALPAY_ERROR_RECORD_SOURCE`). A service process a test
 * starts inherits both and records too. Read from the environment, not the configuration: tests build their
 * configuration from a few settings of their own, and the run's directory is none of them.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';

/** The directory the test run owns: one file per process, a line per error answer of a documented operation. */
export const ERROR_RECORD_DIR = 'SEALPAY_ERROR_RECORD_DIR';
/** The test file whose requests are being answered. */
export const ERROR_RECORD_SOURCE = 'SEALPAY_ERROR_RECORD_SOURCE';

/** One error answer, when the run records them: `operationId` is the route's, undefined where no route matched. */
export function recordErrorAnswer(operationId: string | undefined, status: number, code: string): void {
  const dir = process.env[ERROR_RECORD_DIR];
  if (!dir || !operationId) return;
  const source = process.env[ERROR_RECORD_SOURCE] ?? '-';
  try {
    appendFileSync(join(dir, `${process.pid}.txt`), `${operationId} ${status} ${code} ${source}\n`);
  } catch {
    // The run's directory is gone (something removed it under the run): the answer still goes out as it is. The run's
    // check then finds the records missing and fails, which is where that belongs; an answer never does.
  }
}
