// Reindex (memories/storage/reindexing.py): the FTS index, every vector, the pairs and the vocabulary
// rebuilt from the rows (after a model change, say), and the rebuilds the background work
// (background.ts) shares: the pairs reset to be filled in again, the vocabulary as the facts'
// words, and the vectors of the words it lacks, which the writes (writing.ts) embed through too.

import type { Background } from "./background";
import { MAX_BATCH } from "../facts";
import type { Reader } from "../recall/reading";
import { vocabularyWords } from "../recall/ranking";
import { type State, toBlob } from "./state";

/** POST /reindex (reindexing.py `reindex`): every fact embedded again, a batch at a time before
 * the write, so other requests go on meanwhile; then, in one write, the FTS index, the vectors,
 * the pairs (filled in again by the background work) and the vocabulary. */
export async function reindex(state: State, reader: Reader, background: Background) {
  const rows = state.sql.exec("SELECT id, text, type FROM facts ORDER BY id").toArray();
  state.ensureRoomAnew(rows.length, factWords(state));  // every vector and word anew, before the model is asked
  const vectors: Float32Array[] = [];
  for (let i = 0; i < rows.length; i += MAX_BATCH) vectors.push(...(await state.embed(rows.slice(i, i + MAX_BATCH).map((r) => r.text as string))));
  const words = await embedLacking(state, () => factWords(state));  // the last await
  // Facts written while we embedded have their own fresh vectors already; rebuild the rest.
  state.transact(() => {
    state.sql.exec("DELETE FROM facts_fts");
    state.sql.exec("INSERT INTO facts_fts (rowid, text) SELECT id, text FROM facts");
    rows.forEach((r, i) => {
      const now = state.sql.exec("SELECT text FROM facts WHERE id = ?", r.id).toArray()[0];
      if (now && now.text === r.text) {
        state.sql.exec("INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
          r.id, state.embedder.model, vectors[i].length, toBlob(vectors[i]));
      }
    });
    state.sql.exec("DELETE FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)");
    resetPairs(state);  // every vector may have changed: the pairs are filled in again
    rebuildVocabulary(state, words);
  }, () => state.rebuild());
  await background.fillPairs();
  const n = reader.count();
  return { facts: n, fts: n, vectors: state.vectors.size, model: state.embedder.model };
}

/** Vectors of words, each word embedded alone, in calls of their own. */
async function embedWords(state: State, words: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < words.length; i += MAX_BATCH) out.push(...(await state.embed(words.slice(i, i + MAX_BATCH))));
  return out;
}

/** `have` with a vector for each of `words()`, read again after each await: a write that lands
 * meanwhile, or a reindex, may change what is lacking. Nothing lacks when it returns, so a
 * transaction right after it finds every vector it needs (reindexing.py `word_vectors`). */
export async function embedLacking(state: State, words: () => string[], have = new Map<string, Float32Array>()): Promise<Map<string, Float32Array>> {
  for (let lacking = words().filter((w) => !have.has(w)); lacking.length; lacking = words().filter((w) => !have.has(w))) {
    const vectors = await embedWords(state, lacking);
    lacking.forEach((w, i) => have.set(w, vectors[i]));
  }
  return have;
}

/** No pairs, and every fact up to the newest now to be filled in, inside a write (background.ts
 * `fillPairs` fills them; reindexing.py `rebuild_pairs` builds them at once). */
export function resetPairs(state: State): void {
  state.sql.exec("DELETE FROM pairs");
  state.setMeta("pairs_floor", state.floor);
  state.setMeta("pairs_upto", 0);
  state.setMeta("pairs_target", state.sql.exec<{ n: number }>("SELECT coalesce(max(id), 0) AS n FROM facts").one().n);
}

/** Every word of the facts, each once (the vocabulary a rebuild writes). */
export function factWords(state: State): string[] {
  return [...new Set(state.sql.exec<{ text: string }>("SELECT text FROM facts ORDER BY id").toArray().flatMap((r) => vocabularyWords(r.text)))];
}

/** The vocabulary as the facts' words, inside a write (`vocab.reload` then, in its transaction;
 * reindexing.py `rebuild_vocabulary`). */
export function rebuildVocabulary(state: State, vectors: Map<string, Float32Array>): void {
  const words = factWords(state);
  state.vocab.clear();
  state.vocab.add(words, words.map((w) => vectors.get(w)!));
  state.setMeta("words_model", state.embedder.model);
}
