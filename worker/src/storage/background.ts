// Work the object does in the background (memories/storage/background.py): filling in the pairs table
// for facts stored before it (one slice per alarm) and building the vocabulary of a memory
// from before it. Both write through the steps the writes and reindex use (writing.ts, reindexing.ts).

import { embedLacking, factWords, rebuildVocabulary, resetPairs } from "./reindexing";
import { Part } from "./state";
import type { FactType } from "./vectors";
import { storePairs } from "../writes/writing";

// The pairs of facts stored before the table are filled in slices of about this many
// multiply-adds (a second or two of JavaScript), one slice per alarm, so no event runs long.
const FILL_WORK = 1e9;

export class Background extends Part {
  private building: Promise<void> | null = null;  // the vocabulary's first build, while it runs

  // -- the pairs ------------------------------------------------------------------------

  /** Pairs at another floor (or none yet: a memory from before the table) start again: every
   * fact up to the newest now is to be filled in; facts written from now on bring their own. */
  startPairs(restart = false): void {
    if (!restart && this.state.meta("pairs_floor") === this.state.floor) return;
    this.ctx.storage.transactionSync(() => resetPairs(this.state));
  }

  /** One slice of the fill: each fact, in id order, with the same-type facts of smaller ids (a
   * fact written meanwhile paired itself with everything when it was written). */
  async fillPairs(): Promise<void> {
    // Not without the vectors (a memory past its budget): the fill would pair nothing and call it done.
    if (this.state.full || this.state.pairsReady() || this.state.meta("pairs_floor") !== this.state.floor) return;
    const upto = this.state.meta("pairs_upto") as number;
    const target = this.state.meta("pairs_target") as number;
    const count = Math.max(1, Math.floor(FILL_WORK / Math.max(1, this.vectors.size * this.vectors.dims)));
    const rows = this.sql.exec("SELECT id, type FROM facts WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", upto, target, count).toArray();
    const vectors = this.vectors.read(rows.filter((r) => this.vectors.row.has(r.id as number)).map((r) => r.id as number));
    this.ctx.storage.transactionSync(() => {
      for (const r of rows) {
        const id = r.id as number;
        const v = vectors.get(id);
        if (v) storePairs(this.state, id, r.type as FactType, this.vectors.near(v, r.type as FactType, this.state.floor, id), (other) => other < id);
      }
      this.state.setMeta("pairs_upto", rows.length < count ? target : (rows[rows.length - 1].id as number));
    });
    if (!this.state.pairsReady()) await this.ctx.storage.setAlarm(Date.now() + 10);
  }

  // -- the vocabulary -------------------------------------------------------------------

  /** The vocabulary of a memory from before it, or of one whose words another model embedded:
   * every word of the facts, once; from then on each write adds its own (background.py
   * `build_vocabulary`). A recall that expands waits for it, and starts it again if the model
   * was down the last time. */
  vocabulary(): Promise<void> {
    if (this.state.full || this.state.meta("words_model") === this.embedder.model) return Promise.resolve();
    this.building ??= this.buildVocabulary()
      .catch((e) => console.error("could not build the vocabulary", e))
      .finally(() => { this.building = null; });
    return this.building;
  }

  private async buildVocabulary(): Promise<void> {
    const words = await embedLacking(this.state, () => factWords(this.state));
    this.state.transact(() => rebuildVocabulary(this.state, words), () => this.vocab.reload());
  }
}
