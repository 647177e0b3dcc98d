import { CLAIM_MAGIC_AMOUNTS, LETTER_MAGIC_AMOUNTS } from '../sandbox/sandbox.schema.ts';

/**
 * Who reads a letter's claim code (`readableCodes` in views.service.ts), said wherever the sender's view of a letter
 * is answered.
 */
const CLAIM_CODE_RULE =
  'The claim code is a bearer credential for the escrowed money: anyone holding it can claim. The sender sees ' +
  "`claimCode` and `claimUrl` until the claim only through a credential that may send the letter's amount (a " +
  'session; a full API key without a spend limit; a key whose spend limit has at least the amount left over its ' +
  'rolling 24 hours) or the API key that created the letter; through any other (a `read_only` key, a key whose ' +
  'allowance left is below the amount) both are `null`.';

/** The long OpenAPI descriptions of the letter routes (src/modules/letters/letters.routes.ts), by operationId. */
export const LETTER_DOCS = {
  listLetters: CLAIM_CODE_RULE,
  getLetter: CLAIM_CODE_RULE,
  getLetterPdf:
    'The PDF carries the claim code and its QR: a credential that may not read the code is `403 ' +
    'insufficient_scope`, after `404 letter_not_found` for a letter it does not see. ' +
    CLAIM_CODE_RULE,
  createLetter:
    'Blocks up to about 20 s until the escrow leg is confirmed and verified, then answers 201 with the letter ' +
    'ESCROWED; `502 escrow_unsettled` with `{letterId, txHash}` when the escrow was sent but is not settled yet. ' +
    'Through an API key with a spend limit, a letter whose amount would take the key past it over the last 24 ' +
    'hours is `403 spend_limit_exceeded` with `details: {limit, spent, remaining, resetsAt}`. With an ' +
    '`Idempotency-Key`, a repeat of the same request follows the letter the first one made (201 with it, or ' +
    '`502 escrow_unsettled` naming it while its escrow settles) and never escrows a second; the key on another ' +
    'request is `409 idempotency_conflict`. The answer shows the claim code to the credential that created the ' +
    'letter; later reads follow the rule of `GET /transfer/letter/{id}`.' +
    LETTER_MAGIC_AMOUNTS,
  getOwnClaim:
    'For the claimant only: the letter (amount and memo revealed once CLAIMED) and the claim transaction, ' +
    'as the claim answered them, without claiming again. Anyone else, and a code that matches no claim of ' +
    "the caller's, reads `404 letter_not_found`; the public preview tells them whether it is claimed.",
  claimLetter:
    'Blocks up to about 20 s. First claimant wins. The same principal (the same API key, or the same ' +
    'browser session) repeating into the same wallet gets the existing claim back (200); any other principal, ' +
    'even of the same account, or another wallet, gets `409 already_claimed`. Limited to 10 attempts per 15 ' +
    'minutes per principal and IP.' +
    CLAIM_MAGIC_AMOUNTS,
  sweepLetters:
    'Authenticated by the operator secret in the `X-Sweep-Secret` header (SWEEP_SECRET; `503 ' +
    'configuration_missing` while it is not set), never by a user credential.',
  mailLetter:
    'Idempotent: a retry adopts the mailing the provider already accepted. Needs the claim origin fixed at ' +
    'creation to be https. `tracked` is certified (domestic) or registered (international) mail with a ' +
    'tracking number; `courier` is not offered. Default `standard`. With a provider test key (and on the ' +
    'local print sandbox) letters are validated and priced but never printed: `mail.testMode` is true. ' +
    'A failed attempt leaves the letter ESCROWED, with the attempt recorded and the reason in `error` ' +
    '(cleared by a later successful mailing). Errors: `409 letter_already_mailed`, `422 ' +
    'postage_unavailable` (the provider refused the letter: fix it, do not retry as is), `503 ' +
    'mail_provider_not_configured`, `404 letter_not_found`, `400 claim_origin_not_public`, `400 ' +
    'delivery_method_unavailable`, and `500 internal_error` with `details: {letterId, retryable: true}` ' +
    'when the print provider could not be reached or failed: nothing was mailed twice, retry with backoff.',
  mailLetter2:
    '`internal_error`: the print provider could not be reached or failed; nothing was mailed twice, ' +
    'retry with backoff (`details: {letterId, retryable: true}`)',
};
