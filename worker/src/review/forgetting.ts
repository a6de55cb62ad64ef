// What "forget for good" removes (DELETE /history?fact_id=N; memories/review/forgetting.py), in one
// transaction: every history entry of the fact, and every copy of it in other facts' entries (an
// add's or a delete's `replaced`, a delete's `pairs`, whose `differs` quote its words), its
// proposals, its text in the recall log (the rows keep its id, marked forgotten), the words of its
// texts that no fact in the memory holds any more, and the texts recall keeps the vectors of
// (text_vectors.ts). Then the keyword index is merged: FTS5 keeps a deleted row's terms in its
// segments until they merge.

import { vocabularyWords } from "../recall/ranking";
import type { RecallLog } from "../recall/recall_log";
import type { State } from "../storage/state";
import { casefold } from "../text";

/** The history entries removed. Words another fact holds stay; so do a fact's own while it is
 * still in the memory (forgetting its past texts only). */
export function forget(state: State, recallLog: RecallLog, factId: number): number {
  const { sql } = state;
  let unheld: string[] = [];
  const removed = state.transact(() => {
    const texts: string[] = [];
    for (const row of sql.exec("SELECT before, after FROM history WHERE fact_id = ?", factId)) {
      for (const side of [row.before, row.after]) {
        const value = side ? JSON.parse(side as string) : null;
        if (value && typeof value.text === "string") texts.push(value.text);
      }
    }
    const n = sql.exec("DELETE FROM history WHERE fact_id = ? RETURNING id", factId).toArray().length;
    texts.push(...forgetQuoted(state, factId));
    sql.exec("DELETE FROM conflicts WHERE old = ? OR new = ?", factId, factId);
    recallLog.forget(factId);
    unheld = dropUnheldWords(state, texts);
    sql.exec("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')");
    return n;
  }, () => {
    if (unheld.length && !state.full) state.vocab.reload();  // a full memory holds no word: none to read
    state.textVectors.clear();  // recall's kept texts may hold its words
  });
  return removed;
}

/** The words of `texts` that no fact holds, out of the vocabulary (inside the caller's
 * transaction; the caller reads the vocabulary again once it commits): forgetting.py
 * `drop_unheld_words`. The words dropped. */
export function dropUnheldWords(state: State, texts: string[]): string[] {
  const unheld = [...new Set(texts.flatMap(vocabularyWords))].filter((w) => !held(state, w));
  for (const w of unheld) state.sql.exec("DELETE FROM words WHERE word = ?", w);
  return unheld;
}

type Quoted = { id?: unknown; text?: unknown; old?: unknown; new?: unknown };

/** The fact as other facts' entries keep it, taken out of them: `before.replaced` (what an add
 * replaced, or what a delete gave back) and `before.pairs` (a delete's pairs, whose `differs`
 * quote both facts' words). Its texts there. Those entries' undos then leave it as it is. */
function forgetQuoted(state: State, factId: number): string[] {
  const texts: string[] = [];
  const rows = state.sql.exec<{ id: number; before: string }>("SELECT h.id, h.before FROM history h WHERE h.op IN ('add', 'delete')"
    + " AND h.before IS NOT NULL AND (EXISTS (SELECT 1 FROM json_each(h.before, '$.replaced') WHERE json_extract(value, '$.id') = ?1)"
    + " OR EXISTS (SELECT 1 FROM json_each(h.before, '$.pairs') WHERE json_extract(value, '$.old') = ?1"
    + " OR json_extract(value, '$.new') = ?1))", factId).toArray();
  const quotes: Record<string, (q: Quoted) => boolean> = {
    replaced: (f) => f.id === factId, pairs: (p) => p.old === factId || p.new === factId,
  };
  for (const { id: entry, before: stored } of rows) {
    const before = JSON.parse(stored) as Record<string, Quoted[]>;
    for (const [key, quoting] of Object.entries(quotes)) {
      if (!Array.isArray(before[key])) continue;
      texts.push(...before[key].filter((f) => quoting(f) && typeof f.text === "string").map((f) => f.text as string));
      before[key] = before[key].filter((f) => !quoting(f));
      if (!before[key].length) delete before[key];
    }
    state.sql.exec("UPDATE history SET before = ? WHERE id = ?", Object.keys(before).length ? JSON.stringify(before) : null, entry);
  }
  return texts;
}

/** Whether a fact holds `word` as the vocabulary counts words: the texts that contain it (its
 * case-folded form in text_key) are read and tokenised as the vocabulary does. */
function held(state: State, word: string): boolean {
  return state.sql.exec<{ text: string }>("SELECT text FROM facts WHERE instr(text_key, ?) > 0", casefold(word)).toArray()
    .some((r) => vocabularyWords(r.text).includes(word));
}
