import { Type } from '@sinclair/typebox';

export const ForgotPasswordBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
});
export const ForgotPasswordData = Type.Object({
  accepted: Type.Literal(true, { description: 'The same answer whether or not the address has an account' }),
});
export const ResetPasswordBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the emailed link' }),
  // Length and character rules are the password policy's (400 weak_password), not the schema's.
  newPassword: Type.String({ maxLength: 1000 }),
});
export const ResetPasswordData = Type.Object({ passwordReset: Type.Literal(true) });
