export * from './accounts.ts';
export * from './letters.ts';
export * from './security.ts';
export * from './transactions.ts';
export * from './wallets.ts';
