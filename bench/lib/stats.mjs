// Nearest-rank percentile of ascending `sorted` values (`p` from 0 to 100), the one definition the bench's
// latency rows use; 0 for no values.
export const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0
