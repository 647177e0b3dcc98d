/**
 * The hand-written layer over the generated types (`openapi.ts`) and openapi-fetch: one typed `request` that unwraps
 * the envelope and throws `SealpayError`, retries where that is safe, and the resources integrators use most, with
 * what the interface asks of its clients built in (Idempotency-Keys on money movements, polling at 3–10 s, paging).
 */
import createFetchClient from 'openapi-fetch';
import { errorFromAnswer, SealpayError } from './errors.ts';
import type { components, paths } from './openapi.ts';
import { DEFAULT_RETRY, type Fetch, type RetryOptions, retryingFetch, sleep } from './retry.ts';
import { sandboxAmount } from './sandbox.ts';

type Schemas = components['schemas'];
export type Transaction = Schemas['Transaction'];
export type TransactionStatus = Transaction['status'];
export type TransactionType = Transaction['type'];
export type Letter = Schemas['Letter'];
export type LetterStatus = Letter['status'];
export type Wallet = Schemas['Wallet'];
export type Balance = Schemas['Balance'];
export type User = Schemas['User'];
export type ApiKey = Schemas['ApiKey'];
export type Passkey = Schemas['Passkey'];
export type NotaFile = Schemas['NotaFile'];
export type NotaKey = Schemas['NotaKey'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookDelivery = Schemas['WebhookDelivery'];

export type Method = 'get' | 'post' | 'patch' | 'delete';
/** The documented paths that answer `method`: `'/transactions/{id}'`, … */
export type PathOf<M extends Method> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];
type OperationOf<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : never;
type SuccessOf<Op> = Op extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 ? JsonOf<R[S]> : never }[keyof R]
  : never;
/** What a call resolves to: the envelope's `data` (the sandbox probes, which have none, their whole body). */
export type DataOf<P extends keyof paths, M extends Method> =
  SuccessOf<OperationOf<P, M>> extends { ok: true; data: infer D } ? D : SuccessOf<OperationOf<P, M>>;
type ParametersOf<Op> = Op extends { parameters: infer Pa } ? Pa : never;
type BodyOf<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export interface CallOptions<Op = unknown> {
  params?: {
    path?: ParametersOf<Op> extends { path?: infer X } ? X : never;
    query?: ParametersOf<Op> extends { query?: infer X } ? X : never;
  };
  body?: BodyOf<Op>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** The API root, ending in `/api/v1` (`https://pay.example.com/api/v1`; in the browser `/api/v1` resolves too). */
  baseUrl: string;
  /** An API key (`svc_sk_…`), sent as `Authorization: Bearer`. Without one, the browser's session cookie is used. */
  apiKey?: string;
  /** A `fetch` of your own (a proxy agent, a test double of the network). Default: the global `fetch`. */
  fetch?: (input: Request) => Promise<Response>;
  /** Whether the browser sends its cookies: `same-origin` by default; `include` for another origin. */
  credentials?: RequestCredentials;
  /** Headers sent on every request. */
  headers?: Record<string, string>;
  retry?: RetryOptions;
  /** Called with every error before it is thrown (a web app: a lost session sends the user to log in). */
  onError?: (error: SealpayError) => void;
}

export interface WaitOptions {
  /** The statuses to wait for. Default: the terminal ones, `CONFIRMED`, `SETTLED` and `FAILED`. */
  until?: readonly TransactionStatus[];
  /** Give up (a `SealpayError` with code `timeout`) after this long. Default 5 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The first poll interval; it grows by half at each poll up to `maxIntervalMs`. The interface: 3 to 10 s. */
  minIntervalMs?: number;
  maxIntervalMs?: number;
}

/** Claims sent for one `claimLetter` call, at most (the service allows 10 per 15 minutes). */
const MAX_CLAIM_ATTEMPTS = 4;

export const TERMINAL_STATUSES: readonly TransactionStatus[] = ['CONFIRMED', 'SETTLED', 'FAILED'];

/** A money movement's fields, and optionally its `Idempotency-Key` (one is generated otherwise). */
type Movement<P extends PathOf<'post'>> = BodyOf<OperationOf<P, 'post'>> & {
  idempotencyKey?: string;
  signal?: AbortSignal;
};

/**
 * The pages of a paged list, as one sequence, walked by the keyset cursor (`nextCursor`): each page costs the same
 * however deep it is, and rows inserted meanwhile neither repeat nor shift what is left.
 */
async function* pagesOf<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const result = await fetchPage(cursor);
    yield* result.items;
    if (result.nextCursor === null || result.items.length === 0) return;
    cursor = result.nextCursor;
  }
}

/** A fresh Idempotency-Key: one per submission, the same across its retries. */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

export function createClient(options: ClientOptions) {
  const baseFetch: Fetch = options.fetch ?? ((input) => globalThis.fetch(input));
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const raw = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch(baseFetch, options.retry),
    headers,
    credentials: options.credentials ?? 'same-origin',
  });

  const fail = (error: SealpayError): never => {
    options.onError?.(error);
    throw error;
  };

  /** Sends one request through openapi-fetch; an answer that is not a success becomes a SealpayError. */
  async function send(method: Method, path: string, init: CallOptions & { parseAs?: 'json' | 'blob' }) {
    let result: { data?: unknown; error?: unknown; response: Response };
    try {
      result = await raw.request(method, path as never, init as never);
    } catch (error) {
      if ((error as Error).name === 'AbortError' && init.signal?.aborted) throw error;
      const timedOut = (error as Error).name === 'TimeoutError';
      return fail(
        new SealpayError({
          code: timedOut ? 'timeout' : error instanceof SyntaxError ? 'unexpected_response' : 'network_error',
          message: timedOut
            ? 'The service did not answer in time.'
            : error instanceof SyntaxError
              ? 'The service sent an answer that could not be read.'
              : 'The service could not be reached.',
          status: 0,
          cause: error,
        }),
      );
    }
    if (!result.response.ok) return fail(errorFromAnswer(result.response, result.error));
    return result;
  }

  /**
   * One call of any documented operation, typed by the document: resolves to the envelope's `data`, throws a
   * `SealpayError`. `request('get', '/transactions/{id}', {params: {path: {id}}})`.
   */
  async function request<M extends Method, P extends PathOf<M>>(
    method: M,
    path: P,
    init: CallOptions<OperationOf<P, M>> = {},
  ): Promise<DataOf<P, M>> {
    const { data, response } = await send(method, path, init as CallOptions);
    const body = data as { ok?: unknown; data?: unknown } | undefined;
    // A success outside the envelope: `unexpected_response` (errorFromAnswer finds no envelope in it).
    if (body?.ok !== true) return fail(errorFromAnswer(response, null));
    return ('data' in body ? body.data : body) as DataOf<P, M>;
  }

  /** A binary answer (the letter's PDF). */
  async function download(path: string, init: CallOptions = {}): Promise<Blob> {
    const { data } = await send('get', path, { ...init, parseAs: 'blob' });
    return data as Blob;
  }

  function moveMoney<P extends '/fund' | '/mint' | '/transfer' | '/redeem'>(
    path: P,
    movement: Movement<P>,
  ): Promise<Transaction> {
    const { idempotencyKey = newIdempotencyKey(), signal, ...body } = movement;
    return request('post', path, {
      body: body as never,
      headers: { 'idempotency-key': idempotencyKey },
      ...(signal ? { signal } : {}),
    }).then((data) => (data as { transaction: Transaction }).transaction);
  }

  const transactions = {
    get: (id: string, signal?: AbortSignal) =>
      request('get', '/transactions/{id}', { params: { path: { id } }, ...(signal ? { signal } : {}) }).then(
        (data) => data.transaction,
      ),
    /** One page: `{items, page, pageSize, total, nextCursor}` (by `page`, or by `cursor` from the previous one). */
    page: (query: NonNullable<CallOptions<OperationOf<'/transactions', 'get'>>['params']>['query'] = {}) =>
      request('get', '/transactions', { params: { query } }),
    /** Every transaction matching the filters, newest first, fetched a page at a time: `for await (const tx of …)`. */
    list: (filters: { walletId?: string; type?: TransactionType; status?: TransactionStatus } = {}) =>
      pagesOf((cursor) => transactions.page({ ...filters, pageSize: 100, ...(cursor ? { cursor } : {}) })),
    /**
     * Polls a transaction until it reaches one of `until` (default: a terminal status), at the interface's cadence:
     * every 3 s at first, slowing by half each poll to every 10 s.
     */
    wait: async (id: string, wait: WaitOptions = {}): Promise<Transaction> => {
      const until = wait.until ?? TERMINAL_STATUSES;
      const deadline = Date.now() + (wait.timeoutMs ?? 300_000);
      let interval = wait.minIntervalMs ?? 3_000;
      for (;;) {
        const transaction = await transactions.get(id, wait.signal);
        if (until.includes(transaction.status)) return transaction;
        const left = deadline - Date.now();
        if (left <= 0) {
          return fail(
            new SealpayError({
              code: 'timeout',
              message: `Transaction ${id} is still ${transaction.status}.`,
              status: 0,
              details: { transaction },
            }),
          );
        }
        await sleep(Math.min(interval, left), wait.signal);
        interval = Math.min(wait.maxIntervalMs ?? 10_000, interval * 1.5);
      }
    },
    /** The notarized receipt (`.nota`) of a transaction that reached the chain. */
    receipt: (id: string) => request('get', '/transactions/{id}/nota', { params: { path: { id } } }),
  };

  const letters = {
    /**
     * Escrows the amount and answers the letter. An `Idempotency-Key` goes with it (generated unless you pass
     * `idempotencyKey`): pass the same one to ask again after an answer that never came, and the service answers
     * with the letter the first request made (or `escrow_unsettled` naming it) instead of escrowing a second.
     */
    create: ({ idempotencyKey = newIdempotencyKey(), signal, ...body }: Movement<'/transfer/letter'>) =>
      request('post', '/transfer/letter', {
        body: body as never,
        headers: { 'idempotency-key': idempotencyKey },
        ...(signal ? { signal } : {}),
      }).then((data) => data.letter),
    get: (id: string) =>
      request('get', '/transfer/letter/{id}', { params: { path: { id } } }).then((data) => data.letter),
    page: (query: { page?: number; cursor?: string; pageSize?: number; status?: LetterStatus } = {}) =>
      request('get', '/transfer/letter', { params: { query } }),
    /** Every letter the caller sent, newest first. */
    list: (filters: { status?: LetterStatus } = {}) =>
      pagesOf((cursor) => letters.page({ ...filters, pageSize: 100, ...(cursor ? { cursor } : {}) })),
    preview: (code: string) =>
      request('get', '/transfer/letter/preview', { params: { query: { code } } }).then((data) => data.letter),
    /** The caller's own claim of a letter, by its code (claimant only; anyone else reads `letter_not_found`). */
    ownClaim: (code: string) => request('get', '/transfer/letter/claim', { params: { query: { code } } }),
    /**
     * Claims a letter into one of the caller's wallets. The service blocks up to about 20 s; a claim is idempotent
     * for its claimant, so a dropped connection or `502 claim_unsettled` (sent, bookkeeping pending) is answered by
     * claiming again, with backoff, until `timeoutMs`. With `waitForTransaction` (the default) it also waits for the
     * claim's transaction to be final, so the letter it returns is CLAIMED.
     */
    claim: async (
      body: { claimCode: string; walletId: string },
      claim: { timeoutMs?: number; waitForTransaction?: boolean; signal?: AbortSignal } = {},
    ): Promise<{ letter: Letter; transaction: Transaction }> => {
      const deadline = Date.now() + (claim.timeoutMs ?? 120_000);
      const retry = { ...DEFAULT_RETRY, ...options.retry };
      let outcome: { letter: Letter; transaction: Transaction };
      for (let attempt = 1; ; attempt += 1) {
        try {
          outcome = await request('post', '/transfer/letter/claim', {
            body,
            ...(claim.signal ? { signal: claim.signal } : {}),
          });
          break;
        } catch (error) {
          // Each claim spends one of the 10 claim attempts per 15 minutes: a few, not as many as time allows.
          const again =
            error instanceof SealpayError &&
            (error.code === 'claim_unsettled' || error.code === 'network_error') &&
            attempt < MAX_CLAIM_ATTEMPTS &&
            Date.now() < deadline;
          if (!again) throw error;
          await sleep(Math.min(retry.maxDelayMs, 1_000 * 2 ** Math.min(attempt, 4)), claim.signal);
        }
      }
      if (claim.waitForTransaction === false || TERMINAL_STATUSES.includes(outcome.transaction.status)) {
        return outcome;
      }
      const transaction = await transactions.wait(outcome.transaction.id, {
        timeoutMs: Math.max(1_000, deadline - Date.now()),
        ...(claim.signal ? { signal: claim.signal } : {}),
      });
      // A failed release leaves the letter claimable again: say so rather than claim a second time unasked.
      if (transaction.status === 'FAILED') return { letter: outcome.letter, transaction };
      // The claim repeated by its claimant returns the letter as it now stands (CLAIMED, amount revealed).
      const settled = await request('post', '/transfer/letter/claim', { body });
      return { letter: settled.letter, transaction };
    },
    mail: (id: string, body: BodyOf<OperationOf<'/transfer/letter/{id}/mail', 'post'>> = {}) =>
      request('post', '/transfer/letter/{id}/mail', { params: { path: { id } }, body }).then(
        (data) => data.letter,
      ),
    void: (id: string, body: { acknowledgeMailed?: boolean } = {}) =>
      request('post', '/transfer/letter/{id}/void', { params: { path: { id } }, body }).then(
        (data) => data.letter,
      ),
    pdf: (id: string) => download(`/transfer/letter/${encodeURIComponent(id)}/pdf`),
  };

  const wallets = {
    create: (body: BodyOf<OperationOf<'/wallets', 'post'>>) =>
      request('post', '/wallets', { body }).then((data) => data.wallet),
    list: () => request('get', '/wallets').then((data) => data.wallets),
    get: (id: string) => request('get', '/wallets/{id}', { params: { path: { id } } }),
    makePrimary: (id: string) =>
      request('post', '/wallets/{id}/primary', { params: { path: { id } } }).then((data) => data.wallet),
    balances: (walletId?: string) =>
      request('get', '/balances', { params: { query: walletId ? { walletId } : {} } }).then(
        (data) => data.balances,
      ),
    gas: (walletId?: string) =>
      request('get', '/gas', { params: { query: walletId ? { walletId } : {} } }).then(
        (data) => data.wallets,
      ),
  };

  return {
    /** Any documented operation, typed by the document. */
    request,
    /** The openapi-fetch client underneath (same retries and credentials), for answers you want unwrapped yourself. */
    raw,
    download,
    /** Sandbox only: test STABLE and gas into a wallet. */
    fund: (movement: Movement<'/fund'>) => moveMoney('/fund', movement),
    /** Wraps public STABLE into confidential cSTABLE. */
    mint: (movement: Movement<'/mint'>) => moveMoney('/mint', movement),
    /** A confidential transfer of cSTABLE to an address. */
    transfer: (movement: Movement<'/transfer'>) => moveMoney('/transfer', movement),
    /** Unwraps cSTABLE into public STABLE. */
    redeem: (movement: Movement<'/redeem'>) => moveMoney('/redeem', movement),
    waitForTransaction: (id: string, wait?: WaitOptions) => transactions.wait(id, wait),
    claimLetter: letters.claim,
    transactions,
    letters,
    wallets,
    network: () => request('get', '/network'),
    me: () => request('get', '/me').then((data) => data.user),
    session: () => request('get', '/auth/session'),
    apiKeys: {
      list: () => request('get', '/keys').then((data) => data.keys),
    },
    /**
     * Webhook endpoints (Standard Webhooks; verify deliveries with the `standardwebhooks` package and the
     * endpoint's `whsec_…` secret). Managing endpoints takes a session; listing and testing take either.
     */
    webhooks: {
      list: () => request('get', '/webhooks').then((data) => data.endpoints),
      get: (id: string) =>
        request('get', '/webhooks/{id}', { params: { path: { id } } }).then((data) => data.endpoint),
      /** `{endpoint, secret}`: the secret is shown this once. */
      create: (body: CallOptions<OperationOf<'/webhooks', 'post'>>['body'] & object) =>
        request('post', '/webhooks', { body }),
      deliveries: (id: string) =>
        request('get', '/webhooks/{id}/deliveries', { params: { path: { id } } }).then((data) => data.items),
      /** Queues a `webhook.test` event to the endpoint. */
      test: (id: string) =>
        request('post', '/webhooks/{id}/test', { params: { path: { id } } }).then((data) => data.delivery),
    },
    /**
     * Sandbox helpers (`local`, `devnet`; production answers `404 not_found`): the magic amounts' builder, and the
     * test clock, which takes the operator secret (`SWEEP_SECRET`, sent as `X-Sweep-Secret`).
     */
    sandbox: {
      /** `sandbox.amount('10', 'claimUnsettled')` → `'10.000504'`: see `SANDBOX_OUTCOMES`. */
      amount: sandboxAmount,
      clock: (operatorSecret: string) => {
        const headers = { 'x-sweep-secret': operatorSecret };
        return {
          /** `{now, offsetSeconds}`: the service's time and how far it runs ahead of real time. */
          get: () => request('get', '/sandbox/clock', { headers }),
          /** Moves every process's clock forward by `seconds` (1 to 400 days' worth); it never moves back. */
          advance: (seconds: number) =>
            request('post', '/sandbox/clock', { body: { advanceSeconds: seconds }, headers }),
        };
      },
    },
    notas: {
      /** Checks a nota's signature with the service (`{valid, kind, payload}`). */
      verify: (nota: string) => request('post', '/notas/verify', { body: { nota } }),
      /** The service's public keys, for verifying receipts offline. */
      keys: () => request('get', '/notas/keys').then((data) => data.keys),
    },
  };
}

export type SealpayClient = ReturnType<typeof createClient>;
