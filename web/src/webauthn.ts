/**
 * WebAuthn ceremonies with the JSON forms the service speaks (the options `@simplewebauthn/server` produces, and
 * RegistrationResponseJSON / AuthenticationResponseJSON back): base64url conversions by hand, no dependency.
 */

export function toBase64url(buffer: ArrayBuffer | ArrayBufferView): string {
  const bytes =
    buffer instanceof ArrayBuffer
      ? new Uint8Array(buffer)
      : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64url(text: string): ArrayBuffer {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

interface DescriptorJSON {
  id: string;
  type?: string;
  transports?: string[];
}

interface CreationOptionsJSON {
  challenge: string;
  rp: PublicKeyCredentialRpEntity;
  user: { id: string; name: string; displayName: string };
  pubKeyCredParams: PublicKeyCredentialParameters[];
  timeout?: number;
  excludeCredentials?: DescriptorJSON[];
  authenticatorSelection?: AuthenticatorSelectionCriteria;
  attestation?: AttestationConveyancePreference;
  extensions?: AuthenticationExtensionsClientInputs;
}

interface RequestOptionsJSON {
  challenge: string;
  timeout?: number;
  rpId?: string;
  allowCredentials?: DescriptorJSON[];
  userVerification?: UserVerificationRequirement;
  extensions?: AuthenticationExtensionsClientInputs;
}

function descriptor(d: DescriptorJSON): PublicKeyCredentialDescriptor {
  return {
    id: fromBase64url(d.id),
    type: 'public-key',
    ...(d.transports ? { transports: d.transports as AuthenticatorTransport[] } : {}),
  };
}

export function webauthnSupported(): boolean {
  return typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/**
 * Why passkeys cannot work on this page, or null when they can: WebAuthn takes a domain name as the relying party,
 * and browsers refuse every ceremony at an IP address (`SecurityError: This is an invalid domain`). At a loopback
 * address the same service answers at localhost, so the words say where to go.
 */
export function passkeysUnavailableReason(
  where: Pick<Location, 'hostname' | 'port' | 'protocol'> = location,
): string | null {
  const host = where.hostname;
  if (!IPV4.test(host) && !host.startsWith('[')) return null;
  const instead = LOOPBACK.test(host)
    ? `Open ${where.protocol}//localhost${where.port ? `:${where.port}` : ''}/ to use them.`
    : 'Open this service at its host name to use them.';
  return `Passkeys do not work at an IP address (${host}): WebAuthn needs a domain name such as localhost. ${instead}`;
}

/** Runs `navigator.credentials.create` for the service's registration options; returns RegistrationResponseJSON. */
export async function createPasskey(optionsJSON: CreationOptionsJSON): Promise<Record<string, unknown>> {
  const publicKey: PublicKeyCredentialCreationOptions = {
    challenge: fromBase64url(optionsJSON.challenge),
    rp: optionsJSON.rp,
    user: { ...optionsJSON.user, id: fromBase64url(optionsJSON.user.id) },
    pubKeyCredParams: optionsJSON.pubKeyCredParams,
    ...(optionsJSON.timeout ? { timeout: optionsJSON.timeout } : {}),
    excludeCredentials: (optionsJSON.excludeCredentials ?? []).map(descriptor),
    ...(optionsJSON.authenticatorSelection
      ? { authenticatorSelection: optionsJSON.authenticatorSelection }
      : {}),
    ...(optionsJSON.attestation ? { attestation: optionsJSON.attestation } : {}),
    ...(optionsJSON.extensions ? { extensions: optionsJSON.extensions } : {}),
  };
  const credential = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new Error('No passkey was created.');
  const response = credential.response as AuthenticatorAttestationResponse;
  const transports = typeof response.getTransports === 'function' ? response.getTransports() : undefined;
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      attestationObject: toBase64url(response.attestationObject),
      ...(transports ? { transports } : {}),
    },
    clientExtensionResults: credential.getClientExtensionResults(),
    ...(credential.authenticatorAttachment
      ? { authenticatorAttachment: credential.authenticatorAttachment }
      : {}),
  };
}

/** Runs `navigator.credentials.get` for the service's login options; returns AuthenticationResponseJSON. */
export async function getPasskey(optionsJSON: RequestOptionsJSON): Promise<Record<string, unknown>> {
  const publicKey: PublicKeyCredentialRequestOptions = {
    challenge: fromBase64url(optionsJSON.challenge),
    ...(optionsJSON.timeout ? { timeout: optionsJSON.timeout } : {}),
    ...(optionsJSON.rpId ? { rpId: optionsJSON.rpId } : {}),
    allowCredentials: (optionsJSON.allowCredentials ?? []).map(descriptor),
    ...(optionsJSON.userVerification ? { userVerification: optionsJSON.userVerification } : {}),
    ...(optionsJSON.extensions ? { extensions: optionsJSON.extensions } : {}),
  };
  const credential = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential | null;
  if (!credential) throw new Error('No passkey was chosen.');
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      authenticatorData: toBase64url(response.authenticatorData),
      signature: toBase64url(response.signature),
      userHandle: response.userHandle ? toBase64url(response.userHandle) : null,
    },
    clientExtensionResults: credential.getClientExtensionResults(),
    ...(credential.authenticatorAttachment
      ? { authenticatorAttachment: credential.authenticatorAttachment }
      : {}),
  };
}

export type { CreationOptionsJSON, RequestOptionsJSON };
