/**
 * `vitest run` for `npm test` and `npm run test:pg`, which runs a test file once more when, and only when, the
 * process running it died under it while no test failed.
 *
 * PGlite's WebAssembly can crash V8: a failed check in Node's JIT-page tracking ("Check failed:
 * jit_page.has_value()", a SIGTRAP) or a SIGSEGV (nodejs/node#64500, open upstream on Node 22 to 26). It kills
 * the fork that runs the file. Vitest then reports "Worker exited unexpectedly … while running test file F" as an
 * unhandled error, and the whole run fails although no test did. Seen in two full suites on the 2-core machine
 * (`src/runtime.test.ts`, SIGTRAP; `src/http/metrics.test.ts`, SIGSEGV).
 *
 * Such files are run again, once (`onlyCrashes`). That happens only when the run's every error is such a crash,
 * no test failed, and the run was the whole suite or whole tiers (no arguments but `--project NAME`). Any failing test, any other unhandled error, or
 * a crash in the second run fails as before. What was run again is printed, so a crash that keeps coming back is
 * seen.
 */
import { spawn } from 'node:child_process';
import { onlyCrashes } from './vitest-crashes.ts';

/** Runs vitest with `args`, its output passed through as it comes; resolves its exit code and output. */
function vitest(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('vitest', ['run', ...args], { stdio: ['inherit', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const args = process.argv.slice(2);
// A run of whole tiers (`--project NAME`, as `npm run test:pg` asks) is retried like the whole suite; a run of
// chosen files is not (its crash is for the person who chose them to see).
const wholeTiers = args.every((arg, index) => arg === '--project' || args[index - 1] === '--project');
// CI measures coverage of `src/` (`SEALPAY_COVERAGE=1`, printed after the run: vitest.config.ts's `coverage`).
const coverage = process.env.SEALPAY_COVERAGE === '1' ? ['--coverage.enabled'] : [];
const first = await vitest([...args, ...coverage]);
let code = first.code;
const crashed = code !== 0 && wholeTiers ? onlyCrashes(first.output) : null;
if (crashed) {
  console.info(
    `\n[scripts/vitest.ts] no test failed, but the process running ${crashed.join(', ')} crashed ` +
      '(V8 under PGlite, nodejs/node#64500): running it once more\n',
  );
  code = (await vitest(crashed)).code;
}
process.exit(code);
