/**
 * The first index of an ascending array whose key is at or after `key` (the array's length when
 * none): a binary search. `keyOf` reads an item's key; without it, an item is its own key.
 *
 * Two loops, one per form: each comparison site then sees one kind of key (numbers in the
 * message log's sequence lists, strings where `keyOf` reads topics), so V8 keeps both fast.
 */
export function lowerBound<K extends number | string>(sorted: ArrayLike<K>, key: K): number;
export function lowerBound<T, K extends number | string>(sorted: ArrayLike<T>, key: K, keyOf: (item: T) => K): number;
export function lowerBound<T, K extends number | string>(sorted: ArrayLike<T>, key: K, keyOf?: (item: T) => K): number {
  let low = 0;
  let high = sorted.length;
  if (keyOf === undefined) {
    const items = sorted as unknown as ArrayLike<K>;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (items[middle] < key) low = middle + 1;
      else high = middle;
    }
  } else {
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (keyOf(sorted[middle]) < key) low = middle + 1;
      else high = middle;
    }
  }
  return low;
}
