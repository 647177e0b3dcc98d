/** The long OpenAPI descriptions of the security routes (src/modules/security/security.routes.ts), by operationId. */
export const SECURITY_DOCS = {
  setUpTotp:
    'Creates a pending secret (sealed at rest) and returns it with its `otpauth://` URI, once. ' +
    'Confirm with `POST /me/totp/enable`. `400 totp_already_enabled` while 2FA is on.',
  enableTotp:
    'Confirms the pending enrollment with a live code; two-factor enforcement starts on success. Answers ' +
    'ten single-use `recoveryCodes`, shown this once (stored hashed): each logs in, or turns two-factor off, ' +
    'in place of a code, once. Errors: `400 totp_not_configured`, `400 invalid_totp_code`.',
  regenerateRecoveryCodes:
    'Replaces the recovery codes with ten new ones, shown this once; the old ones stop working. Needs the ' +
    'password and a live code (or an unused recovery code). Errors: `401 invalid_credentials` (password), ' +
    '`400 invalid_totp_code`, `400 totp_not_configured` (two-factor is off), `429 rate_limited` after 10 ' +
    'password attempts in 15 minutes (counted per account with `POST /me/password`).',
  disableTotp:
    'Needs the password and a live code (or an unused recovery code); drops the recovery codes and emails ' +
    'a notice to the account. Errors: `401 invalid_credentials` (password), ' +
    '`400 invalid_totp_code`, `400 totp_not_configured`, `429 rate_limited` after 10 password attempts in ' +
    '15 minutes (counted per account with `POST /me/password`).',
  logInWithTotp:
    "Exchanges the `pendingToken` of `POST /auth/login` and a live code, or one of the account's recovery " +
    'codes (each works once), for a session cookie. Pending tokens live 5 minutes and are single use. Every ' +
    'failure is `401 invalid_totp_code` and counts against the login limit.',
  removePasskey:
    'It logs in no more, at once, and is no longer listed. Idempotent: a repeat answers the same record. ' +
    "Errors: `404 not_found` (another account's id).",
  getPasskeyRegistrationOptions:
    'WebAuthn creation options. The challenge travels in a signed cookie bound to the account, valid ' +
    '5 minutes and single use; it must accompany `POST /me/passkeys/register`.',
  registerPasskey:
    'Verifies the attestation against the challenge cookie. Errors: `400 invalid_challenge`, ' +
    '`400 challenge_expired`, `400 invalid_host`, `400 passkey_verification_failed`, `409 passkey_exists`.',
  getPasskeyLoginOptions:
    'WebAuthn request options; the challenge travels in a signed cookie (5 minutes, single use). ' +
    '`allowCredentials` is always empty (discoverable credentials): the answer is the same whether or not ' +
    '`email` has an account or passkeys, so it reveals neither; `email` is accepted and not used.',
  logInWithPasskey:
    'Verifies the assertion against the challenge cookie and mints a session cookie. Errors: ' +
    '`401 unknown_passkey`, `401 passkey_verification_failed` (signature, challenge, origin or counter), ' +
    '`403 account_disabled`. Failures count against the login limit.',
};
