/** The long OpenAPI descriptions of the webhook routes (src/modules/webhooks/webhooks.routes.ts), by operationId. */
export const WEBHOOK_DOCS = {
  createWebhook:
    'Events are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`: ' +
    '`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the secret `whsec_<base64>`); `webhook-timestamp` ' +
    "is real time, also after the sandbox's test clock moved. The body is " +
    '`{type, timestamp, data}`: `data` is the transaction, letter or wallet as this API shows it (a ' +
    "letter's `amount` and `memo` stay `sealed` until it is claimed). Delivered at least once, the same " +
    '`webhook-id` on every retry; retried with backoff for 3 days; a 2xx within 10 s is success, redirects ' +
    'are not followed. The secret is shown once. At most 10 endpoints per account. Errors: ' +
    '`400 invalid_webhook_url`, `400 webhook_limit_reached`, `400 validation_error`.',
  rotateWebhookSecret:
    'The new secret is shown once; the old one keeps signing beside it for 24 hours (two `v1,` ' +
    'signatures). Errors: `404 not_found`.',
};
