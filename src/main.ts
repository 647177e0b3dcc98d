import { parseArgs } from 'node:util';
import closeWithGrace from 'close-with-grace';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { buildApp } from './app.ts';
import { type Config, ConfigError, loadConfig, loadDevnetSettings } from './config.ts';
import { sendControlRequest, startControlServer } from './control.ts';
import type { Deps } from './deps.ts';
import { configuredSecrets, createRedactor, loggerOptions } from './http/logger.ts';
import { startMetricsServer } from './http/metrics.ts';
import { LockHeldError } from './lib/pid-lock.ts';
import { makeDataDirPrivate, PRIVATE_UMASK, tightenedMessage } from './lib/private-dir.ts';
import { runAccountsCommand } from './modules/accounts/accounts.cli.ts';
import { startFollower } from './modules/incoming/follower.service.ts';
import { startLetterSweeper } from './modules/letters/sweep.service.ts';
import { startEmailDelivery } from './modules/notifications/notifications.service.ts';
import { formatReconcile, reconcileExitCode } from './modules/reconcile/reconcile.cli.ts';
import { type ReconcileReport, reconcile, startReconciler } from './modules/reconcile/reconcile.service.ts';
import { startWebhookDelivery } from './modules/webhooks/delivery.service.ts';
import { closeDeps, createDeps } from './runtime.ts';
import { startWorker } from './worker/worker.ts';

const USAGE = `sealpay <command>

Commands:
  start                      API, worker and (on NETWORK=local) the embedded chain, in one process
  serve                      API only (scale out: any number, against one PostgreSQL)
  worker                     worker only (any number, against one PostgreSQL)
  devnet [--block-time N]    a local chain with the fhEVM mock and relayer on JSON-RPC (DEVNET_PORT, 8545);
                             writes DATA_DIR/devnet.env for NETWORK=devnet service processes; --block-time:
                             a block every N seconds instead of one per transaction (as anvil --block-time)
  migrate                    apply database migrations and exit
  repair nonces              find nonce gaps (a broadcast the chain refused) and fill each with a zero-value
                             self-transfer; prints what it did
  accounts create --email E [--name N] [--company C]
                             create an account with a temporary password (printed once)
  accounts disable --email E
  accounts enable --email E
  reconcile [--json]         the ledger against the chain: every custodial wallet's STABLE and cSTABLE, the letter
                             vault, the operator's gas, stuck transactions, letters needing review; exits 0 with no
                             difference, 1 with any, 2 when it cannot run

Settings come from the environment: see README.md.`;

type Role = { api: boolean; worker: boolean };

/** An operator command refused (unknown email, existing account): its message, exit code 2, no stack. */
class OperatorError extends Error {}

/**
 * A promise rejected with nobody listening is a bug to fix, not a reason to stop serving every other request (and
 * drop every lease the worker holds): it is logged as an error and the process goes on. close-with-grace stops
 * the process on one; its listener is replaced here. An uncaught exception still stops it: the process state may
 * be broken then.
 */
function keepRunningOnUnhandledRejection(log: { error: (object: object, message: string) => void }): void {
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', (reason) => {
    log.error({ err: reason }, 'unhandled promise rejection (a bug): logged, the service keeps running');
  });
}

/** The process's logger: Fastify's own when it serves the API, the same pino configuration when it only works. */
function processLogger(config: Config): FastifyBaseLogger {
  return pino(
    loggerOptions(config.logLevel, createRedactor(configuredSecrets(config))) as pino.LoggerOptions,
  ) as FastifyBaseLogger;
}

/** A `worker`'s own `/metrics` on WORKER_METRICS_PORT; a port already taken is the operator's setting to change. */
async function startWorkerMetrics(config: Config, deps: Deps, log: FastifyBaseLogger, port: number) {
  try {
    const metrics = await startMetricsServer(config, deps.metrics.registry, port, log);
    log.info(
      { port: metrics.port },
      `worker metrics on http://${config.host}:${metrics.port}/metrics (WORKER_METRICS_PORT)`,
    );
    return metrics;
  } catch (error) {
    if ((error as { code?: string }).code !== 'EADDRINUSE') throw error;
    throw new ConfigError(
      `WORKER_METRICS_PORT ${port} is already in use on ${config.host}: give each worker a port of its own`,
    );
  }
}

async function run(role: Role): Promise<void> {
  const config = loadConfig();
  const tightened = makeDataDirPrivate(config.dataDir);
  const deps = await createDeps(config, { network: true });
  // A worker process builds no HTTP app: the operations it runs come with its dependencies.
  const app = role.api ? await buildApp(deps) : null;
  const log = app?.log ?? processLogger(config);
  if (tightened > 0)
    log.warn({ dataDir: config.dataDir, tightened }, tightenedMessage(config.dataDir, tightened));
  const stoppers: Array<() => Promise<void>> = [];
  // The embedded database is this process's alone: operator commands reach it through the control socket.
  if (deps.database.kind === 'pglite') stoppers.push(await startControlServer(deps));
  if (role.worker && config.worker.enabled) {
    // Before any work starts: a port another process holds stops this one here, with nothing half-run.
    if (!app && config.workerMetricsPort !== null) {
      const metrics = await startWorkerMetrics(config, deps, log, config.workerMetricsPort);
      stoppers.push(metrics.close);
    }
    stoppers.push(await startWorker(deps, log));
    stoppers.push(startLetterSweeper(deps, log));
    stoppers.push(startFollower(deps, log));
    stoppers.push(await startWebhookDelivery(deps, log));
    stoppers.push(startEmailDelivery(deps, log));
    stoppers.push(startReconciler(deps, log));
  }
  if (!deps.email) {
    log.warn(
      { network: config.network },
      'SMTP_URL is not set: account emails (password reset links, security notices) are not sent',
    );
  }
  closeWithGrace({ delay: 10_000, logger: log }, async ({ err, signal }) => {
    if (err) log.error({ err }, 'stopping after an error');
    else log.info({ signal }, 'stopping');
    for (const stop of stoppers) await stop();
    await app?.close();
    await closeDeps(deps);
  });
  keepRunningOnUnhandledRejection(log);
  if (app) {
    await app.listen({ port: config.port, host: config.host });
    log.info(
      { network: config.network, environment: config.environment, database: deps.database.kind },
      `sealpay ready on http://${config.host}:${config.port} (public origin ${config.publicOrigin})`,
    );
  } else {
    log.info('sealpay worker running');
  }
}

/** `--block-time N`: whole seconds, at least 1 (anvil's too). */
function parseBlockTime(args: string[]): number | undefined {
  let text: string | undefined;
  try {
    text = parseArgs({ args, options: { 'block-time': { type: 'string' } } }).values['block-time'];
  } catch (error) {
    throw new OperatorError((error as Error).message);
  }
  if (text === undefined) return undefined;
  if (!/^[1-9]\d{0,5}$/.test(text)) {
    throw new OperatorError(`--block-time takes whole seconds from 1 to 999999, not ${JSON.stringify(text)}`);
  }
  return Number(text);
}

async function runDevnet(args: string[]): Promise<void> {
  const settings = loadDevnetSettings();
  const blockTime = parseBlockTime(args);
  const tightened = makeDataDirPrivate(settings.dataDir);
  const { startDevnet } = await import('./adapters/chain/devnet.ts');
  const say = (message: string) => console.log(`devnet: ${message}`);
  if (tightened > 0) say(tightenedMessage(settings.dataDir, tightened));
  // It deploys sealpay's contracts: compiled here on a fresh clone, as `npm start`'s prestart does (the build is
  // incremental: milliseconds when up to date). The devnet serves no web app, so the contracts are all it builds.
  const { buildContracts } = await import('../scripts/build.ts');
  const built = buildContracts({ log: (line) => say(`build: ${line}`) });
  if (!built.compiled) say(`build: contracts up to date (${Math.round(built.durationMs)} ms)`);
  const devnet = await startDevnet({
    ...settings,
    ...(blockTime ? { blockTime } : {}),
    logger: { info: say, warn: say, error: say },
  });
  closeWithGrace({ delay: 10_000 }, async ({ err, signal }) => {
    if (err) console.error('devnet: stopping after an error', err);
    else say(`stopping (${signal ?? 'exit'})`);
    await devnet.close();
  });
  // The operator's key stays in the file (mode 0600): settings are printed, secrets are not.
  const shown = devnet.settings.map(([name, value]) =>
    name === 'OPERATOR_PRIVATE_KEY' ? `${name}=<in ${devnet.envFile}>` : `${name}=${value}`,
  );
  console.log(
    [
      `sealpay devnet: JSON-RPC and the fhEVM relayer methods on ${devnet.rpcUrl} (chain ${devnet.network.chainId}, ${blockTime ? `a block every ${blockTime} s` : 'automine'})`,
      `settings for NETWORK=devnet processes, in ${devnet.envFile}:`,
      ...shown.map((line) => `  ${line}`),
      `load them with: set -a; . ${devnet.envFile}; set +a`,
    ].join('\n'),
  );
}

/**
 * `sealpay reconcile [--json]`: through the running service on the embedded database (it owns it), else with a
 * database and chain of its own. Prints the table (or the JSON report); exit 1 with a difference, 2 when it cannot
 * run (the reason printed).
 */
async function runReconcile(args: string[]): Promise<void> {
  let json: boolean | undefined;
  try {
    json = parseArgs({ args, options: { json: { type: 'boolean' } } }).values.json;
  } catch (error) {
    throw new OperatorError((error as Error).message);
  }
  const config = loadConfig();
  let report: ReconcileReport | null = null;
  try {
    if (!config.databaseUrl) {
      const answer = await sendControlRequest(config.dataDir, { command: 'reconcile' });
      if (answer && !answer.ok) throw new Error(answer.error);
      if (answer?.ok) report = JSON.parse(answer.output) as ReconcileReport;
    }
    if (!report) {
      const deps = await createDeps(config, { network: true });
      try {
        report = await reconcile(deps);
      } finally {
        await closeDeps(deps);
      }
    }
  } catch (error) {
    if (error instanceof ConfigError || error instanceof LockHeldError) throw error;
    throw new OperatorError(`reconcile cannot run: ${(error as Error).message}`);
  }
  console.log(json ? JSON.stringify(report, null, 2) : formatReconcile(report));
  process.exitCode = reconcileExitCode(report);
}

async function main(argv: string[]): Promise<void> {
  // Whatever the command, what it creates is its user's alone (the data directory's own tightening is per command).
  process.umask(PRIVATE_UMASK);
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return run({ api: true, worker: true });
    case 'serve':
      return run({ api: true, worker: false });
    case 'worker':
      return run({ api: false, worker: true });
    case 'devnet':
      return runDevnet(rest);
    case 'migrate': {
      const config = loadConfig();
      if (!config.databaseUrl && (await sendControlRequest(config.dataDir, { command: 'ping' }))) {
        console.log('the service running in DATA_DIR applied the migrations when it started');
        return;
      }
      const tightened = makeDataDirPrivate(config.dataDir);
      if (tightened > 0) console.log(tightenedMessage(config.dataDir, tightened));
      const deps: Deps = await createDeps(config);
      await closeDeps(deps);
      console.log('migrations applied');
      return;
    }
    case 'repair': {
      if (rest[0] !== 'nonces') {
        console.log(USAGE);
        process.exitCode = 2;
        return;
      }
      const deps = await createDeps(loadConfig(), { network: true });
      try {
        const { describeNonceRepair, repairNonces } = await import('./worker/nonce-repair.ts');
        const { custodialKeyOf } = await import('./modules/wallets/wallets.service.ts');
        if (!deps.network) throw new Error('repair nonces needs the chain');
        const report = await repairNonces(deps, deps.network, custodialKeyOf);
        console.log(describeNonceRepair(report));
        if (report.repairs.some((repair) => repair.action === 'unfillable')) process.exitCode = 1;
      } finally {
        await closeDeps(deps);
      }
      return;
    }
    case 'reconcile':
      return runReconcile(rest);
    case 'accounts': {
      const { positionals, values } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { email: { type: 'string' }, name: { type: 'string' }, company: { type: 'string' } },
      });
      const config = loadConfig();
      const action = positionals[0] ?? '';
      // On the embedded database a running service owns it: the command goes through its control socket.
      if (!config.databaseUrl) {
        const answer = await sendControlRequest(config.dataDir, {
          command: 'accounts',
          action,
          options: values,
        });
        if (answer) {
          if (!answer.ok) throw new OperatorError(answer.error);
          console.log(answer.output);
          return;
        }
      }
      const deps = await createDeps(config);
      try {
        console.log(await runAccountsCommand(deps, action, values));
      } catch (error) {
        throw new OperatorError((error as Error).message);
      } finally {
        await closeDeps(deps);
      }
      return;
    }
    default:
      console.log(USAGE);
      if (command && command !== 'help' && command !== '--help') process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof LockHeldError || error instanceof OperatorError) {
    console.error(`sealpay: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
