export * from './accounts.ts';
export * from './letters.ts';
export * from './list-totals.ts';
export * from './recovery.ts';
export * from './security.ts';
export * from './transactions.ts';
export * from './wallets.ts';
export * from './webhooks.ts';
