export * from './accounts.ts';
export * from './security.ts';
