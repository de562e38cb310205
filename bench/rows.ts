/**
 * The rows every benchmark writes, so that the engine, the bare fastify route and the raw LMDB
 * reference all store the same content.
 *
 * REST table `bench` (record ids assigned by the server): name varchar(32), qty integer,
 * price float, note varchar(64); index `by_qty` on qty.
 *
 * Actions table `bench_actions`: id bigint primary key, name varchar(32), qty integer,
 * price float, ts timestamp, note varchar(64).
 */

export const QTY_RANGE = 100_000;

export const REST_FIELDS = [
  { name: 'name', type: 'varchar', length: 32 },
  { name: 'qty', type: 'integer', length: 4 },
  { name: 'price', type: 'float', length: 8 },
  { name: 'note', type: 'varchar', length: 64 },
];

export interface RestRow {
  name: string;
  qty: number;
  price: number;
  note: string;
}

export function restRow(n: number): RestRow {
  return {
    name: `name ${n}`,
    qty: (n * 7919) % QTY_RANGE,
    price: Math.round(n * 1.37 * 100) / 100,
    note: `a note about row ${n}, about forty characters`,
  };
}

/** Values in column order (what the engine stores, the id being the key). */
export function restValues(row: RestRow): unknown[] {
  return [row.name, row.qty, row.price, row.note];
}

export const ACTIONS_FIELDS = [
  { name: 'id', type: 'bigint', primaryKey: 1 },
  { name: 'name', type: 'varchar', length: 32 },
  { name: 'qty', type: 'integer' },
  { name: 'price', type: 'float' },
  { name: 'ts', type: 'timestamp' },
  { name: 'note', type: 'varchar', length: 64 },
];

export const ACTIONS_FIELD_NAMES = ACTIONS_FIELDS.map((field) => field.name);

const BASE_TIME = Date.UTC(2024, 0, 1);

/** The canonical timestamp the engine stores (ISO, no zone). */
export function canonicalTimestamp(n: number): string {
  return new Date(BASE_TIME + n * 1000).toISOString().slice(0, 23);
}

/** One actions row without its id: [name, qty, price, ts, note] (ts canonical). */
export function actionsValues(id: number): unknown[] {
  return [`name ${id}`, (id * 7919) % QTY_RANGE, Math.round(id * 1.37 * 100) / 100, canonicalTimestamp(id), `a note about row ${id}, about forty characters`];
}

/**
 * The JSON text of one insertRecords batch of `count` rows with ids first..first+count-1, built
 * as a string (cheap for the load generator, which shares the machine with the server).
 */
export function actionsBatchJson(authToken: string, tableName: string, first: number, count: number): string {
  const rows: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const id = first + i;
    const v = actionsValues(id);
    rows[i] = `[${id},"${v[0]}",${v[1]},${v[2]},"${v[3]}","${v[4]}"]`;
  }
  return `{"api":"db","action":"insertRecords","authToken":"${authToken}","params":{"tableName":"${tableName}","dataFormat":"arrays","fieldNames":${JSON.stringify(ACTIONS_FIELD_NAMES)},"sourceData":[${rows.join(',')}]}}`;
}

/** Index key of an integer column value: flag byte, sign-flipped big-endian int32, 8-byte id. */
export function integerIndexKey(value: number, id: number): Buffer {
  const key = Buffer.allocUnsafe(13);
  key[0] = 1;
  key.writeUInt32BE((value ^ 0x80000000) >>> 0, 1);
  key.writeBigUInt64BE(BigInt(id), 5);
  return key;
}
