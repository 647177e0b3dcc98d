/**
 * A metric's value in the Prometheus text format `/metrics` answers: every sample line of `name` (unlabelled, or
 * one per label set) summed; 0 when the metric has no sample yet.
 */
export function metricValue(text: string, name: string): number {
  const sample = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`);
  let sum = 0;
  for (const line of text.split('\n')) {
    const value = sample.exec(line)?.[1];
    if (value !== undefined) sum += Number(value);
  }
  return sum;
}
