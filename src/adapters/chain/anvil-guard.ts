/**
 * Runs anvil (argv[2], with the arguments after it: the anvil binary, or `unshare … -- <anvil>`, which replaces
 * itself with anvil in a network namespace of its own) as its child, and kills it as soon as this process's stdin
 * closes. The embedded network spawns this guard with a pipe as stdin: when the service exits by any means (kill -9
 * included) the kernel closes the pipe, and anvil goes with it, so no orphan keeps its port and memory.
 *
 * The guard is started in a process group of its own, so a Ctrl-C in the service's terminal does not stop anvil
 * before the service has taken its last snapshot; it leaves when anvil leaves, with anvil's exit code.
 */
import { spawn } from 'node:child_process';

const [binary, ...args] = process.argv.slice(2);
if (!binary) {
  process.stderr.write('usage: anvil-guard.ts <command> [arguments…] (anvil, or unshare … -- anvil)\n');
  process.exit(2);
}

const anvil = spawn(binary, args, { stdio: ['ignore', 'inherit', 'inherit'] });
const stop = () => {
  if (anvil.exitCode === null && anvil.signalCode === null) anvil.kill('SIGKILL');
};
anvil.on('error', (error) => {
  process.stderr.write(`anvil could not be started: ${error.message}\n`);
  process.exit(127);
});
anvil.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.stdin.resume();
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, stop);
