import { QUEUED_MAGIC_AMOUNTS } from '../sandbox/sandbox.schema.ts';

/** The long OpenAPI descriptions of the transaction routes (src/modules/transactions/transactions.routes.ts), by operationId. */
export const TRANSACTION_DOCS = {
  fundWallet:
    'Capped at 1000 STABLE per account over a rolling 24 hours; past the cap the transaction ends FAILED ' +
    'with `errorCode: faucet_cap_exceeded`. Answers 201 with the transaction QUEUED.' +
    QUEUED_MAGIC_AMOUNTS,
  createTransfer:
    'A transfer the confidential balance cannot cover ends FAILED (`transfer_failed`): it moved nothing. ' +
    'Through an API key with a spend limit, a transfer that would take the key past it over the last 24 ' +
    'hours is `403 spend_limit_exceeded` with `details: {limit, spent, remaining, resetsAt}`.' +
    QUEUED_MAGIC_AMOUNTS,
  mintConfidential: `Answers 201 with the transaction QUEUED.${QUEUED_MAGIC_AMOUNTS}`,
  redeemConfidential: `Goes PENDING, then SETTLING while the payout is finalized, and ends SETTLED.${QUEUED_MAGIC_AMOUNTS}`,
};
