import { Type } from '@sinclair/typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../http/envelope.ts';

export const Passkey = Type.Object(
  {
    id: Type.String(),
    deviceName: Nullable(Type.String()),
    transports: Type.Array(Type.String()),
    createdAt: Timestamp,
    lastUsedAt: NullableTimestamp,
  },
  { $id: 'Passkey', title: 'Passkey' },
);

const Base64Url = Type.String({ minLength: 1, maxLength: 65_536, pattern: '^[A-Za-z0-9_-]*={0,2}$' });

/** The authenticator's attestation, as `navigator.credentials.create()` returns it in JSON form. */
export const RegistrationCredential = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1024 }),
    rawId: Type.String({ minLength: 1, maxLength: 1024 }),
    type: Type.Literal('public-key'),
    response: Type.Object({
      clientDataJSON: Base64Url,
      attestationObject: Base64Url,
      transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
    }),
    clientExtensionResults: Type.Optional(Type.Object({})),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { description: 'RegistrationResponseJSON (the authenticator attestation)' },
);

/** The authenticator's assertion, as `navigator.credentials.get()` returns it in JSON form. */
export const AuthenticationCredential = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 1024 }),
    rawId: Type.String({ minLength: 1, maxLength: 1024 }),
    type: Type.Literal('public-key'),
    response: Type.Object({
      clientDataJSON: Base64Url,
      authenticatorData: Base64Url,
      signature: Base64Url,
      userHandle: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
    }),
    clientExtensionResults: Type.Optional(Type.Object({})),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { description: 'AuthenticationResponseJSON (the authenticator assertion)' },
);

const WebAuthnOptions = Type.Object({}, { additionalProperties: true, description: 'WebAuthn options JSON' });

export const TotpSetupData = Type.Object({
  secret: Type.String({ description: 'Base32 secret, shown once' }),
  otpauthUrl: Type.String({ description: '`otpauth://totp/…` URI for an authenticator app (QR code)' }),
});
export const TotpEnableBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) });
export const TotpDisableBody = Type.Object({
  password: Type.String({ minLength: 1, maxLength: 1000 }),
  code: Type.String({
    minLength: 1,
    maxLength: 32,
    description: 'A live TOTP code or an unused recovery code',
  }),
});
export const TotpLoginBody = Type.Object({
  pendingToken: Type.String({ minLength: 1, maxLength: 200 }),
  code: Type.String({
    minLength: 1,
    maxLength: 32,
    description: 'A live TOTP code or an unused recovery code',
  }),
});
export const TotpState = <T extends boolean>(value: T) => Type.Object({ totpEnabled: Type.Literal(value) });

const RecoveryCodes = Type.Array(Type.String(), {
  minItems: 10,
  maxItems: 10,
  description:
    'Ten single-use recovery codes (`xxxx-xxxx-xxxx`), shown this once; each replaces a TOTP code once',
});
export const TotpEnabledData = Type.Object({ totpEnabled: Type.Literal(true), recoveryCodes: RecoveryCodes });
export const RecoveryCodesBody = Type.Object({
  password: Type.String({ minLength: 1, maxLength: 1000 }),
  code: Type.String({
    minLength: 1,
    maxLength: 32,
    description: 'A live TOTP code or an unused recovery code',
  }),
});
export const RecoveryCodesData = Type.Object({ recoveryCodes: RecoveryCodes });

export const RenamePasskeyBody = Type.Object({ deviceName: Type.String({ minLength: 1, maxLength: 100 }) });

export const OptionsData = Type.Object({ options: WebAuthnOptions });
export const RegisterPasskeyBody = Type.Object({
  credential: RegistrationCredential,
  deviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});
export const PasskeyLoginOptionsBody = Type.Object({
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
});
export const PasskeyLoginBody = Type.Object({ credential: AuthenticationCredential });
