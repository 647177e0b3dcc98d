/** The new-password field, as the service's password policy bounds it: sign-up, password change and reset. */

import { h } from './dom.ts';

/** What the policy asks, shown under every new-password field. */
export const PASSWORD_HINT =
  '10 to 200 characters, with an uppercase letter, a lowercase letter and a digit.';

/** A field for a new password (the browser refuses one outside the policy's length before it is sent). */
export function newPasswordInput(): HTMLInputElement {
  return h('input', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: 10,
    maxlength: 200,
  });
}
