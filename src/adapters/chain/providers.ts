/**
 * Several JSON-RPC providers behind one EIP-1193 `request` (`RPC_URL=https://a,https://b`, in order of preference).
 *
 * - A read goes to the first available provider. When it fails as a provider (HTTP error status, `429` included, a
 *   reset or refused connection, a timeout, a JSON-RPC rate-limit error), the same request goes to the next one, and
 *   the one that failed is set aside for a backoff (1 s, doubling to 30 s). Set aside, it is probed in the
 *   background (`eth_blockNumber`) once its backoff is over; the probe that succeeds puts it back first in line. When
 *   every provider is set aside, they are all tried anyway, soonest-due first, except one set aside for a timeout:
 *   its requests hang, so no read waits for it again until a probe finds it answering.
 * - A read that no provider answers (each failed as a provider, or is set aside for a timeout) fails with
 *   `503 service_unavailable`, whose `details.retryAfter` is the seconds until the next probe is due: the chain is
 *   unreachable, and once that is known a read says so at once instead of waiting out every timeout again.
 * - An answer of the node itself (a revert, "nonce too low", "already known", an unknown method) is the answer: it
 *   is returned as it is, without asking the next provider, and the provider counts as working.
 * - `eth_sendRawTransaction` goes to every provider at once (the same signed bytes, so the chain keeps one): the first
 *   success answers. When none succeeds, a node's own answer is preferred (the caller reads refusals from it), in
 *   order of preference, over a provider failure.
 *
 * Every attempt is reported to `observer` (per-provider requests, failures, latency, and availability changes: the
 * metrics of `src/lib/metrics.ts`). A provider is named by its position in `RPC_URL` and its host, never its path or
 * query (where providers put the API key).
 */
import {
  BaseError,
  type Chain,
  HttpRequestError,
  http,
  LimitExceededRpcError,
  SocketClosedError,
  TimeoutError,
} from 'viem';
import { AppError } from '../../lib/errors.ts';

/** Why a provider failed a request (the `reason` of the error metric). */
export type ProviderFailure = 'rate_limited' | 'http_error' | 'timeout' | 'connection';

/**
 * A provider as logs and metrics name it: its position and host, never the part of a URL that may hold a
 * key.
 */
export interface ProviderName {
  /** Position in `RPC_URL`, from 1. */
  readonly position: number;
  /** The URL's host (and port): never its path or query, which may hold a key. */
  readonly host: string;
}

/** Told of each request to a provider and each change in its availability (metrics and logs). */
export interface ProviderObserver {
  /** One request to one provider, answered (`failure` null, a node's error answer included) or failed. */
  request(event: {
    provider: ProviderName;
    method: string;
    seconds: number;
    failure: ProviderFailure | null;
  }): void;
  /** The provider was set aside (false) or is back (true). */
  availability(provider: ProviderName, available: boolean): void;
}

/** The providers of one chain in order of preference, and how long to wait and back off before the next. */
export interface ProviderListOptions {
  urls: readonly string[];
  chain: Chain;
  /** Per request to one provider (default 10 s). */
  timeoutMs?: number;
  /** First backoff after a failure, doubled at each failure that follows (default 1 s). */
  backoffMs?: number;
  /** Longest backoff (default 30 s). */
  maxBackoffMs?: number;
  observer?: ProviderObserver;
  now?: () => number;
}

/** An EIP-1193 `request` function, as viem's custom transport takes it. */
export type Eip1193Request = (args: { method: string; params?: unknown }) => Promise<unknown>;

/** Several RPC providers behind one EIP-1193 `request`: a failing one is set aside and the next is asked. */
export interface ProviderList {
  request: Eip1193Request;
  /** Each provider's name and whether it is in line (not set aside). */
  status(): { provider: ProviderName; available: boolean }[];
}

/** `RPC_URL`'s list: comma-separated, blanks dropped. */
export function splitRpcUrls(value: string | null | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url.length > 0);
}

/** The provider's side of a failed request, or null when the error is a node's answer (to be returned as is). */
export function providerFailure(error: unknown): ProviderFailure | null {
  // The list's own `service_unavailable`: the failure of the last provider it asked, if it asked one.
  if (error instanceof AppError && error.cause !== undefined) return providerFailure(error.cause);
  if (!(error instanceof BaseError)) return 'connection';
  // -32005 (the standard limit), 429 in a JSON-RPC body (Alchemy's batches), -32007 (QuickNode's own).
  const limited = (e: unknown) =>
    e instanceof LimitExceededRpcError || [429, -32007].includes((e as { code?: unknown }).code as number);
  if (error.walk(limited)) return 'rate_limited';
  if (error.walk((e) => e instanceof TimeoutError)) return 'timeout';
  if (error.walk((e) => e instanceof SocketClosedError)) return 'connection';
  const httpError = error.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
  if (httpError) {
    if (httpError.status === 429) return 'rate_limited';
    return httpError.status === undefined ? 'connection' : 'http_error';
  }
  // Providers word their limits differently; a node never answers a call with these words.
  if (/rate.?limit|too many requests|request limit|capacity exceeded/i.test(error.message))
    return 'rate_limited';
  return null;
}

interface Provider {
  name: ProviderName;
  request: Eip1193Request;
  /** Consecutive failures; 0 = in line. */
  failures: number;
  /** While set aside: when it may be probed again. */
  retryAt: number;
  probing: boolean;
  /** Set aside for a timeout: reads skip it (they would hang as long) until a probe finds it answering. */
  hangs: boolean;
}

const BROADCAST = 'eth_sendRawTransaction';

/**
 * Builds the fail-over list over `options.urls`: a read asks the providers in line first, in order; a broadcast
 * goes to all of them at once and the first acceptance answers.
 */
export function createProviderList(options: ProviderListOptions): ProviderList {
  const timeout = options.timeoutMs ?? 10_000;
  const backoff = options.backoffMs ?? 1000;
  const maxBackoff = options.maxBackoffMs ?? 30_000;
  const now = options.now ?? Date.now;
  const observer = options.observer;
  const providers: Provider[] = options.urls.map((url, index) => {
    // Each provider answers once: retrying is trying the next one (and the caller's transport retries the list).
    const transport = http(url, { retryCount: 0, timeout })({ chain: options.chain, retryCount: 0, timeout });
    return {
      name: { position: index + 1, host: new URL(url).host },
      request: transport.request as Eip1193Request,
      failures: 0,
      retryAt: 0,
      probing: false,
      hangs: false,
    };
  });

  for (const provider of providers) observer?.availability(provider.name, true);

  const succeeded = (provider: Provider) => {
    if (provider.failures === 0) return;
    provider.failures = 0;
    provider.retryAt = 0;
    provider.hangs = false;
    observer?.availability(provider.name, true);
  };
  const failed = (provider: Provider, failure: ProviderFailure) => {
    const at = now();
    if (failure === 'timeout') provider.hangs = true;
    // Requests already under way when it was set aside fail too: they count once.
    if (provider.failures > 0 && at < provider.retryAt) return;
    provider.failures += 1;
    provider.retryAt = at + Math.min(backoff * 2 ** (provider.failures - 1), maxBackoff);
    if (provider.failures === 1) observer?.availability(provider.name, false);
  };

  /** One request to one provider: reported, and its outcome applied to the provider's standing. */
  const attempt = async (provider: Provider, args: { method: string; params?: unknown }) => {
    const started = performance.now();
    try {
      const result = await provider.request(args);
      observer?.request({
        provider: provider.name,
        method: args.method,
        seconds: (performance.now() - started) / 1000,
        failure: null,
      });
      succeeded(provider);
      return result;
    } catch (error) {
      const failure = providerFailure(error);
      observer?.request({
        provider: provider.name,
        method: args.method,
        seconds: (performance.now() - started) / 1000,
        failure,
      });
      if (failure) failed(provider, failure);
      else succeeded(provider);
      throw error;
    }
  };

  const probeDue = () => {
    const at = now();
    for (const provider of providers) {
      if (provider.failures === 0 || provider.probing || at < provider.retryAt) continue;
      provider.probing = true;
      attempt(provider, { method: 'eth_blockNumber', params: [] })
        .catch(() => undefined)
        .finally(() => {
          provider.probing = false;
        });
    }
  };

  const read = async (args: { method: string; params?: unknown }) => {
    probeDue();
    const inLine = providers.filter((provider) => provider.failures === 0);
    const setAside = providers
      .filter((provider) => provider.failures > 0 && !provider.hangs)
      .sort((a, b) => a.retryAt - b.retryAt);
    let lastError: unknown;
    for (const provider of [...inLine, ...setAside]) {
      try {
        return await attempt(provider, args);
      } catch (error) {
        if (!providerFailure(error)) throw error;
        lastError = error;
      }
    }
    throw unreachable(lastError);
  };

  /** No provider answered a read: a 503 saying when the next probe is due (Retry-After). */
  const unreachable = (cause: unknown) => {
    const nextProbe = Math.min(...providers.map((provider) => provider.retryAt));
    const retryAfter = Math.max(1, Math.ceil((nextProbe - now()) / 1000));
    return new AppError(
      'service_unavailable',
      `The chain cannot be reached: no RPC provider answers. Retry in ${retryAfter} seconds.`,
      { details: { retryAfter }, cause },
    );
  };

  const broadcast = async (args: { method: string; params?: unknown }) => {
    const outcomes = await new Promise<PromiseSettledResult<unknown>[]>((resolve) => {
      const settled: PromiseSettledResult<unknown>[] = new Array(providers.length);
      let pending = providers.length;
      providers.forEach((provider, index) => {
        attempt(provider, args).then(
          (value) => {
            // The first acceptance answers; the others go on and are only counted.
            resolve([{ status: 'fulfilled', value }]);
          },
          (reason: unknown) => {
            settled[index] = { status: 'rejected', reason };
            pending -= 1;
            if (pending === 0) resolve(settled);
          },
        );
      });
    });
    const accepted = outcomes.find((outcome) => outcome.status === 'fulfilled');
    if (accepted) return accepted.value;
    const reasons = outcomes.map((outcome) => (outcome as PromiseRejectedResult).reason);
    throw reasons.find((reason) => providerFailure(reason) === null) ?? reasons[0];
  };

  return {
    request: (args) => (args.method === BROADCAST ? broadcast(args) : read(args)),
    status: () =>
      providers.map((provider) => ({ provider: provider.name, available: provider.failures === 0 })),
  };
}

/**
 * `request` asked again while it fails as a provider (every provider of the list failed it), up to `rounds` times in
 * all, a little later each time: for the clients that have no retry of their own (ethers, under the relayer SDK and
 * the devnet's mock relayer). One encryption or decryption takes dozens of reads; without it, one read that every
 * provider happened to fail loses the whole step to the worker's backoff. viem's clients retry through their
 * transport instead (`retryCount`).
 */
export function withRounds(request: Eip1193Request, rounds: number, delayMs = 250): Eip1193Request {
  return async (args) => {
    for (let round = 1; ; round++) {
      try {
        return await request(args);
      } catch (error) {
        if (round >= rounds || !providerFailure(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, delayMs * round));
      }
    }
  };
}
