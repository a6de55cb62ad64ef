// Rows looked up by a list of keys, a row read a key. A list joined (`json_each`) or an
// `IN (...)` reads two rows a key (the list's and the table's), three as `IN (SELECT value FROM
// json_each(?))`, and a Durable Object is billed for each: every recall's rescoring read twice the
// rows it rescored. A `VALUES` list is no table: joined, it reads the table's rows alone
// (test/recall_rows.test.ts). The object's SQLite takes at most 100 bound parameters a statement.

export const PART = 90;

/** `columns` of the rows of `table` (as `t`) whose `key` is one of `keys`, `where` (with `params`)
 * on them, each key once: a row read a key asked, found or not. */
export function* byKey(sql: SqlStorage, columns: string, table: string, key: string, keys: SqlStorageValue[],
  where = "1", ...params: SqlStorageValue[]): Generator<Record<string, SqlStorageValue>> {
  const all = [...new Set(keys)];
  for (let i = 0; i < all.length; i += PART) {
    const part = all.slice(i, i + PART);
    yield* sql.exec(`SELECT ${columns} FROM (VALUES ${part.map(() => "(?)").join(",")}) AS j CROSS JOIN ${table} AS t`
      + ` ON t.${key} = j.column1 WHERE ${where}`, ...part, ...params);
  }
}

/** The float32 vector in `embedding` of each of `ids` that `table` holds. */
export function vectorsById(sql: SqlStorage, table: string, key: string, ids: number[], where: string,
  ...params: SqlStorageValue[]): Map<number, Float32Array> {
  const out = new Map<number, Float32Array>();
  for (const r of byKey(sql, `t.${key} AS id, t.embedding`, table, key, ids, where, ...params)) {
    out.set(r.id as number, new Float32Array(r.embedding as ArrayBuffer));
  }
  return out;
}
