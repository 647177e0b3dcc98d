import { describe, expect, it } from 'vitest';
import { onlyCrashes } from '../scripts/vitest-crashes.ts';

/** The end of a real `npm test` run (stop 35) whose fork died under `src/runtime.test.ts`, colours included. */
const crashed = `
\u001b[31m⎯⎯⎯⎯⎯⎯ Unhandled Errors ⎯⎯⎯⎯⎯⎯\u001b[39m
Vitest caught 1 unhandled error during the test run.
⎯⎯⎯⎯⎯⎯ Unhandled Error ⎯⎯⎯⎯⎯⎯⎯
Error: [vitest-pool]: Worker forks emitted error.
 ❯ EventEmitter.onTaskError node_modules/vitest/dist/chunks/index.ER9afepi.js:6031:21
Caused by: Error: Worker exited unexpectedly with signal SIGTRAP during started state while running test file /work/main/src/runtime.test.ts
 ❯ ChildProcess.emitUnexpectedExit node_modules/vitest/dist/chunks/index.ER9afepi.js:5447:33

\u001b[2m Test Files \u001b[22m \u001b[1m\u001b[32m88 passed\u001b[39m\u001b[22m\u001b[2m | \u001b[22m\u001b[33m2 skipped\u001b[39m\u001b[90m (91)\u001b[39m
\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[32m723 passed\u001b[39m\u001b[22m\u001b[2m | \u001b[22m\u001b[33m8 skipped\u001b[39m\u001b[90m (735)\u001b[39m
\u001b[2m     Errors \u001b[22m \u001b[1m\u001b[31m1 error\u001b[39m\u001b[22m
`;

describe('which failed runs scripts/vitest.ts runs again', () => {
  it('a run whose only error is a crashed test process: that file', () => {
    expect(onlyCrashes(crashed)).toEqual(['/work/main/src/runtime.test.ts']);
  });

  it('never a run where a test failed as well', () => {
    const failedToo = crashed.replace(
      '723 passed',
      '1 failed\u001b[39m\u001b[22m\u001b[2m | \u001b[22m722 passed',
    );
    expect(onlyCrashes(failedToo)).toBeNull();
  });

  it('never a run with another unhandled error beside the crash', () => {
    expect(onlyCrashes(crashed.replace('1 error', '2 errors'))).toBeNull();
  });

  it('never a run where nothing crashed', () => {
    expect(onlyCrashes(crashed.replace('Worker exited unexpectedly', 'Worker said'))).toBeNull();
  });
});
