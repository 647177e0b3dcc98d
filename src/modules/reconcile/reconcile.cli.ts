import type { ReconcileReport } from './reconcile.service.ts';

/** `sealpay reconcile` exits 0 with no difference, 1 with any (2, when it cannot run, is the CLI's). */
export function reconcileExitCode(report: ReconcileReport): 0 | 1 {
  return report.differences === 0 ? 0 : 1;
}

const ZERO = '0.00';

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  );
}

/** The report as a readable table; its last line `reconcile: N wallets, D differences`. */
export function formatReconcile(report: ReconcileReport): string {
  const lines = [`sealpay reconcile at ${report.checkedAt}`, ''];
  lines.push(
    ...table([
      ['wallet', 'address', 'asset', 'ledger', 'chain', 'difference'],
      ...report.wallets.map((check) => [
        check.walletId,
        check.address,
        check.asset,
        check.ledger ?? '-',
        check.chain ?? '-',
        check.difference === null
          ? 'not judged (external)'
          : check.difference === ZERO
            ? '0'
            : `${check.difference}  << DIFFERENCE`,
      ]),
    ]),
  );
  const { vault, operator } = report;
  lines.push(
    '',
    `letter vault ${vault.address}: ${vault.letters} letters escrowed on chain, ledger ${vault.ledger}, chain ${vault.chain}` +
      (vault.difference === ZERO ? '' : `, difference ${vault.difference}  << DIFFERENCE`),
    `operator ${operator.address}: gas ${operator.gasBalance}, spent ${operator.spentLast7Days} over 7 days, ` +
      (operator.daysLeft === null
        ? 'lasts indefinitely at that rate'
        : `lasts ${operator.daysLeft} days at that rate`),
  );
  lines.push(
    report.stuck.length === 0
      ? 'stuck transactions: none'
      : `stuck transactions (PENDING or SETTLING for more than 15 minutes): ${report.stuck.length}  << DIFFERENCE`,
    ...report.stuck.map(
      (row) => `  ${row.transactionId}  ${row.type} ${row.status} since ${row.since}  wallet ${row.walletId}`,
    ),
    report.needsReview.length === 0
      ? 'letters needing review: none'
      : `letters needing review: ${report.needsReview.length}`,
    ...report.needsReview.map(
      (letter) => `  ${letter.letterId}  ${letter.status}  wallet ${letter.walletId}`,
    ),
    '',
    `reconcile: ${new Set(report.wallets.map((check) => check.walletId)).size} wallets, ${report.differences} differences`,
  );
  return lines.join('\n');
}
