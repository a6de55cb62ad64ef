// The exact float32 vectors a search rescores, read from their table a row an id. A search's
// candidates are scattered ids; a list of them joined (`json_each`) or an `IN (...)` reads two
// rows an id (the list's and the table's), so every recall's rescoring was billed twice the rows
// it rescored. A `VALUES` list is no table: joined, it reads the table's row alone
// (test/recall_rows.test.ts). The object's SQLite takes at most 100 bound parameters a statement.

export const PART = 90;

/** The vector of each of `ids` in `table` (its key `key`, and `where` with `params` on the
 * table's row as `t`), little-endian float32 in `embedding`. */
export function vectorsById(sql: SqlStorage, table: string, key: string, ids: number[], where: string,
  ...params: SqlStorageValue[]): Map<number, Float32Array> {
  const out = new Map<number, Float32Array>();
  for (let i = 0; i < ids.length; i += PART) {
    const part = ids.slice(i, i + PART);
    const rows = sql.exec(`SELECT t.${key} AS id, t.embedding FROM (VALUES ${part.map(() => "(?)").join(",")}) AS j`
      + ` CROSS JOIN ${table} AS t ON t.${key} = j.column1 WHERE ${where}`, ...part, ...params);
    for (const r of rows) out.set(r.id as number, new Float32Array(r.embedding as ArrayBuffer));
  }
  return out;
}
