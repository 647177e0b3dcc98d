/**
 * vitest's setupFiles: turns on the error recorder of `src/http/error-record.ts` in this test file's process (and in
 * the services it starts, which inherit the environment), naming the file as the source of what it records.
 */
import { beforeAll, inject } from 'vitest';
import { ERROR_RECORD_DIR, ERROR_RECORD_SOURCE } from '../../src/http/error-record.ts';

// biome-ignore lint/correctness/noEmptyPattern: vitest reads the hook's first parameter as a fixture pattern; the suite is the second.
beforeAll(({}, suite) => {
  process.env[ERROR_RECORD_DIR] = inject('errorRecordDir');
  process.env[ERROR_RECORD_SOURCE] = 'filepath' in suite ? suite.filepath : suite.file.filepath;
});
