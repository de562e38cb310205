/** The first index of a sorted array whose key is at or after `key` (binary search). */
export function lowerBound<T>(sorted: readonly T[], key: string, keyOf: (item: T) => string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keyOf(sorted[middle]) < key) low = middle + 1;
    else high = middle;
  }
  return low;
}
