import { Type } from '@sinclair/typebox';
import { Nullable } from '../../http/envelope.ts';

/** `GET /network`: the chain, its contracts and how confidential it is. */
export const NetworkInfo = Type.Object({
  network: Type.String(),
  environment: Type.String(),
  chainId: Type.Integer(),
  rpcUrl: Nullable(Type.String()),
  explorerBaseUrl: Nullable(Type.String()),
  confidentiality: Type.Union([Type.Literal('fhe'), Type.Literal('mock')]),
  contracts: Type.Object({
    stablecoin: Type.String(),
    confidentialToken: Type.String(),
    letterVault: Type.String(),
  }),
});
