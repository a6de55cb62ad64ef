// The one door every write goes through (memories/writes/writing.py): add, batch (and its dry
// run), edit, delete, the owner's review and the memory's own settings, with the exact and near
// duplicate checks that decide them, and the step that writes a fact's pairs, which background.ts
// uses too. Each question lives in the module that names it: a replacement's validity in
// replacing.ts, the owner's review in reviewing.ts, an undo in undo.ts, a reindex in
// reindexing.ts; the undo of an entry and a contradiction's resolution (conflicts.ts) write
// through here.
//
// Every write changes row, FTS entry, vector and its history entry (history.ts) inside one
// `transactionSync`, and at its end the codes in memory with their stored blocks (state.ts
// `transact`, code_blocks.ts). The object runs one event at a time, but an `await` (the
// embedding) opens its input gate to other requests, so every check that decides a write
// (duplicate? does the id still exist?) runs again inside the synchronous transaction, after the
// last await.

import { Duplicates } from "./duplicates_of";
import { pairsOf } from "../review/conflicts";
import { type Fact, MAX_BATCH, chars, cleanId, cleanIdNamed, cleanSource, cleanText, cleanTime, cleanType, stamp, validFrom } from "../facts";
import { dropUnheldWords } from "../review/forgetting";
import { type Entry, type History, MAX_NOTE, type Op } from "../review/history";
import { HttpError, boolParam, invalid, tooLarge, wellFormed } from "../serving/http";
import { PROPOSE, PROPOSE_CANDIDATES, PROPOSING, cleanSupersedes, currentClosest, hidden, proposals } from "./lifecycle";
import type { Fusion } from "../recall/ranking";
import type { Reader } from "../recall/reading";
import { type Proposal, replaceNow, replacesAtOnce } from "./replace_at_once";
import { type Held, type Validity, ownValidUntil, patched, replace, replaceable, replacedBy, settle, undone, unreplace } from "./replacing";
import { embedLacking } from "../storage/reindexing";
import { review, reviewedBy, unreview } from "../review/reviewing";
import { sameJson } from "../model/settings";
import { Part, type State, toBlob } from "../storage/state";
import { textKey } from "../text";
import { dot } from "../storage/vector_math";
import { type FactType, type Top } from "../storage/vectors";


/** A fact a batch stored inside its transaction, for the matrix once that commits. */
type Pending = { id: number; type: FactType; vector: Float32Array };

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
export const RESTORED = "from a backup: stored as it was, without the duplicate check";

/** How `addMany` stores (its defaults: an add, deduplicated, kept; `alone`: POST /facts's one fact). */
type AddHow = { op?: Op; note?: string; undoes?: number | null; restore?: boolean; dryRun?: boolean; check?: () => void;
  also?: () => void; alone?: boolean };

/** What `addMany` answers for each fact: its status and body (as POST /facts answers). */
type Added = { status: number; body: { id: number; created: boolean; fact: Fact; [more: string]: unknown } };

/** A dry run's end (writing.py `RolledBack`): thrown out of the write's transaction, which rolls
 * it back, before anything in memory changes; it carries the answers the batch would have had. */
class RolledBack extends Error {
  constructor(readonly results: Added[]) {
    super("a dry run: rolled back");
  }
}

export class Writer extends Part {
  private duplicates: Duplicates;

  constructor(state: State, private reader: Reader, private history: History) {
    super(state);
    this.duplicates = new Duplicates(state, reader);
  }

  /** The texts' vectors, and those of their words the vocabulary lacks, in a call of their own
   * (writing.py `_embed_facts`). */
  private async embedFacts(texts: string[]): Promise<[Float32Array[], Map<string, Float32Array>]> {
    const missing = () => this.vocab.missing(texts);
    const [vectors, words] = await Promise.all([this.state.embed(texts), embedLacking(this.state, missing)]);
    return [vectors, await embedLacking(this.state, missing, words)];  // whatever went missing during the other call
  }

  /** The new words of stored texts into the vocabulary, inside their write (writing.py `_add_words`). */
  private addWords(texts: string[], vectors: Map<string, Float32Array>): void {
    const words = this.vocab.missing(texts);
    this.vocab.add(words, words.map((w) => vectors.get(w)!));
  }

  /** The lowest cosine a write needs: the duplicate threshold's and the pairs' floor. */
  private get least(): number {
    return Math.min(this.state.threshold, this.state.floor);
  }

  /** [id, exact cosine] of every same-type fact of the index at or above `min` (the index finds
   * them on its codes: vectors.ts) and its closest few below it down to `top.lower` (vectors.ts
   * `near`'s `top`), then of `pending` at or above `top.lower` (or `min`). */
  private near(vector: Float32Array, type: FactType, pending: Pending[], min: number, top: Top | null = null): [number, number][] {
    const out = this.vectors.near(vector, type, min, null, top);
    const least = top ? Math.min(min, top.lower) : min;
    for (const p of pending) {
      if (p.type !== type) continue;
      const s = dot(p.vector, vector);  // summed as the index's exact rows are
      if (s >= least) out.push([p.id, s]);
    }
    return out;
  }

  // -- the lifecycle --------------------------------------------------------------------

  /** The facts no longer current (inside the write): never proposed. */
  private stale(): number[] {
    const [sql, args] = hidden(null);
    return this.sql.exec<{ id: number }>(sql, ...args).toArray().map((r) => r.id);
  }

  /** Whether the memory's review is "before": a fact not reviewed is pending, and what it replaces
   * waits for it (replacing.ts). */
  get reviewBefore(): boolean {
    return this.state.review.mode === "before";
  }

  /** A created fact's proposals (lifecycle.ts `proposals`), stored as open conflicts inside its
   * write: of `near`, the current facts other than those it replaces (`skip`) and its duplicate.
   * A newer one that may replace it (an imported fact older than what the memory holds) is kept
   * the other way round, and is not in the answer: the write replaces nothing newer than itself. */
  private propose(id: number, text: string, created: string, near: [number, number][], skip: number[],
    duplicate: number | null): Proposal[] {
    const over = near.filter(([other, s]) => s >= PROPOSE && other !== id && other !== duplicate && !skip.includes(other));
    const [facts, eligible] = currentClosest(over, (ids) => this.reader.getMany(ids), PROPOSE_CANDIDATES);
    const newer = new Set(eligible.filter(([other]) => facts.get(other)!.created_at > created).map(([other]) => other));
    const out: Proposal[] = [];
    for (const [other, cosine, differs, reverse] of proposals(eligible, new Map(eligible.map(([other]) => [other, facts.get(other)!.text])), text, newer)) {
      const score = round6(cosine);
      const [old, next] = reverse ? [id, other] : [other, id];
      this.sql.exec("INSERT OR IGNORE INTO conflicts (old, new, score, differs) VALUES (?, ?, ?, ?)", old, next, score, JSON.stringify(differs));
      if (!reverse) out.push({ id: other, fact: facts.get(other)!, score, differs, replaced: false });
    }
    return out;
  }

  /** 507 `memory_full` unless `facts` more rows and the new words of `texts` fit in the budget. */
  private ensureRoom(facts: number, texts: string[]): void {
    const words = this.vocab.missing(texts);
    this.state.ensureRoom(facts, words.length);
  }

  // -- writes ---------------------------------------------------------------------------

  // Every write names its client (X-Memory-Client), for the history; an undo also names the
  // entry it undoes (`undoes`, marked in the write's transaction) and says so (`note`).

  async addOne(data: Record<string, unknown>, client = ""): Promise<Response> {
    const [r] = await this.addMany([data], client, { alone: true });
    return Response.json(r.body, { status: r.status });
  }

  /** POST /facts/batch (service.py `add_facts`). `client`: read once the body is checked, as there. */
  async addBatch(data: Record<string, unknown>, client: () => string = () => "") {
    const facts = data.facts;
    if (!Array.isArray(facts) || facts.some((f) => typeof f !== "object" || f === null || Array.isArray(f))) {
      throw invalid("facts must be a list of objects");
    }
    if (facts.length > MAX_BATCH) throw tooLarge(`a batch holds at most ${MAX_BATCH} facts`);
    const restore = boolParam(data.restore, "restore", false);  // each as given: a backup into an empty memory
    const dryRun = boolParam(data.dry_run, "dry_run", false);  // every check and answer, then rolled back
    const note = "note" in data ? data.note : "";  // each stored fact's history entry's (an import names its file)
    if (typeof note !== "string" || chars(note) > MAX_NOTE) throw invalid(`note must be text of at most ${MAX_NOTE} characters`);
    wellFormed(note, "note");
    const who = client();
    if (!facts.length) return { results: [] };
    const how: AddHow = { note: note || (restore ? RESTORED : ""), restore, dryRun };
    return { results: (await this.addMany(facts, who, how)).map((r) => r.body) };
  }

  /** Store facts with dedup on write: each fact all or nothing, the batch one transaction; each
   * stored fact is one history entry (`op` add, or restore for an undone delete), which holds the
   * facts it replaced (`supersedes`) as they were. `restore`: no dedup at all (what was there,
   * force-stored near duplicates and all) and no proposals, `superseded_by` and `reviewed_at` kept;
   * an id in use is still a 409. `dryRun`: every check and every answer as if stored, then the
   * transaction rolled back (no history entry, proposal or word kept, the index untouched).
   * `check`: what must still hold, run again inside the transaction (an undo's); `also`: more of
   * the same transaction, after the facts (an undone delete's pairs and replacements, undo.ts). */
  async addMany(items: Record<string, unknown>[], client = "", how: AddHow = {}): Promise<Added[]> {
    const { op = "add", note = "", undoes = null, restore = false, dryRun = false, check, also, alone = false } = how;
    const clean = items.map((i) => {
      const c = {
        text: cleanText(i.text),
        type: cleanType(i.type ?? "fact"),
        source: cleanSource(i.source ?? ""),
        created_at: cleanTime(i.created_at, "created_at"),
        updated_at: cleanTime(i.updated_at, "updated_at"),
        id: cleanId(i.id),
        force: boolParam(i.force, "force", false),  // store even over a near (not an exact) duplicate
        valid_until: cleanTime(i.valid_until, "valid_until"),
        superseded_by: cleanIdNamed(i.superseded_by, "superseded_by"),  // kept only by a restore
        supersedes: cleanSupersedes(i.supersedes),
        reviewed_at: cleanTime(i.reviewed_at, "reviewed_at"),  // kept only by a restore
        reviewedGiven: "reviewed_at" in i,  // the item names reviewed_at (null too); a restore of one that does not is reviewed
        own_valid_until: cleanTime(i.own_valid_until, "own_valid_until"),  // kept only by a restore: a replaced fact's own (replacing.ts)
      };
      validFrom(c.valid_until, c.created_at);
      if (restore) c.supersedes = [];  // stored as given: a backup's facts say what replaced what (superseded_by)
      return c;
    });
    // Checked before the model is asked too, and again in the transaction (where a fact the batch
    // stores before, under an id it gives, may be named).
    const given = new Set<number>();
    for (const c of clean) {
      const ids = c.supersedes.filter((id) => !given.has(id));
      replaceable(ids, this.reader.getMany(ids));
      if (c.id !== null) given.add(c.id);
    }
    if (clean.length && this.state.full) throw this.state.fullError();  // before the model is asked
    const [vectors, words] = clean.length ? await this.embedFacts(clean.map((c) => c.text)) : [[], new Map()];
    // After the await: other writes may have landed meanwhile, so every check is made here. The
    // matrix changes only once every fact is written: until then the batch's stored facts wait
    // in `pending`, and later facts of the batch dedup and pair against them from there.
    const pending: Pending[] = [];
    const stored: string[] = [];
    // How many facts the batch's `supersedes` name, by type: no longer current once a fact of the
    // batch replaces them, so each fact's closest few hold that many more (as writing.py's).
    const named = new Map<FactType, number>();
    for (const c of clean) named.set(c.type, (named.get(c.type) ?? 0) + c.supersedes.length);
    let staleIds: number[] | null = null;  // read once a write, at its first proposing fact (writing.py: once a batch)
    const write = () => {
      check?.();
      const out = clean.map((c, i): Added => {
        // As they are now: an earlier fact of the batch may have replaced one.
        let replaced = replaceable(c.supersedes, this.reader.getMany(c.supersedes));
        // One list of neighbours serves the dedup check, the pairs and the proposals. A fact's
        // proposals need only its closest few down to PROPOSE (`top`), not every fact that far: its
        // k leaves room for those and for a near duplicate stored over; its own are left out.
        const proposing = !restore && PROPOSING.includes(c.type);
        const top = proposing
          ? { lower: PROPOSE, k: PROPOSE_CANDIDATES + named.get(c.type)! + 1, hidden: [...(staleIds ??= this.stale()), ...c.supersedes] }
          : null;
        const near = this.near(vectors[i], c.type, pending, this.least, top);
        const found = restore ? null : this.duplicates.find(c.text, c.type, near, null, c.supersedes);
        const dup = found && !(c.force && found[1] === "near") ? found : null;
        if (dup) {
          const fact = this.reader.get(dup[0]);
          return { status: 200, body: { id: fact.id, created: false, duplicate: { match: dup[1], score: round6(dup[2]) }, fact } };
        }
        // No current fact holds the text, but a replaced one does: that one, unless this write replaces (moving back).
        const was = restore || c.supersedes.length ? null : this.duplicates.replaced(c.text, c.type);
        if (was) return { status: 200, body: { id: was.id, created: false, duplicate: { match: "replaced", score: 1 }, fact: was } };
        const created = c.created_at ?? stamp(new Date());
        const updated = c.updated_at ?? created;
        validFrom(c.valid_until, created);
        if (c.id !== null && this.sql.exec("SELECT 1 FROM facts WHERE id = ?", c.id).toArray().length) {
          throw new HttpError(409, "id_taken", `fact id ${c.id} is in use by another fact`);
        }
        this.ensureRoom(pending.length + 1, [...stored, c.text]);  // 507 rolls back the whole batch
        const supersededBy = restore ? c.superseded_by : null;
        // A restore: as it was; a backup from before the review was there to be seen: reviewed.
        const reviewedAt = restore ? (c.reviewedGiven ? c.reviewed_at : created)
          : reviewedBy(client, c.source, this.state.review) ? created : null;
        const id = this.sql.exec<{ id: number }>(
          "INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at, valid_until, superseded_by,"
            + " reviewed_at, own_valid_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
          c.id, c.text, textKey(c.text), c.type, c.source, created, updated, c.valid_until, supersededBy, reviewedAt,
          supersededBy !== null ? c.own_valid_until : null,
        ).one().id;
        this.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, c.text);
        this.sql.exec("INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
          id, this.embedder.model, vectors[i].length, toBlob(vectors[i]));
        storePairs(this.state, id, c.type, near);
        for (const f of replaced) replace(this.sql, f.id, id, this.reviewBefore);  // each named fact, in this write
        let conflicts = restore || !PROPOSING.includes(c.type) ? [] : this.propose(id, c.text, created, near, c.supersedes, found?.[0] ?? null);
        const atOnce = replacesAtOnce(this.state.proposals, alone && op === "add", client, c.source, this.state.review, conflicts);
        if (atOnce) {  // the memory's proposals setting: replaced in this write, the pair kept as done
          [conflicts, replaced] = [replaceNow(this.sql, this.reader, id, conflicts, this.reviewBefore), [...replaced, ...atOnce]];
        }
        pending.push({ id, type: c.type, vector: vectors[i] });
        stored.push(c.text);
        const fact: Fact = {
          id, text: c.text, type: c.type, source: c.source, created_at: created, updated_at: updated,
          valid_until: c.valid_until, superseded_by: supersededBy, reviewed_at: reviewedAt,
        };
        let why = note;
        if (found && !dup) {  // (an import's note, naming its file, stays first)
          why = `${why ? `${why}; ` : ""}stored though a near duplicate of #${found[0]} (${found[2].toFixed(3)}): the client's decision`;
        }
        if (replaced.length) why = `${why ? `${why}; ` : ""}replaces ${replaced.map((f) => `#${f.id}`).join(", ")}`;
        if (atOnce) why += " at once (the memory's proposals setting is replace)";
        this.history.record(client, op, id, replaced.length ? { replaced } : null, fact, why, undoes);
        // Pending: kept unreviewed where only reviewed facts are recalled (recalled once reviewed).
        const waits = reviewedAt === null && this.reviewBefore ? { pending: true } : {};
        return { status: 201, body: { id, created: true, fact, conflicts, ...waits } };
      });
      this.addWords(stored, words);
      also?.();
      return out;
    };
    try {
      return this.state.transact(() => {
        const out = write();
        if (dryRun) throw new RolledBack(out);  // before `apply`: nothing in memory changes, and storage rolls back
        return out;
      }, () => {
        for (const p of pending) this.vectors.put(p.id, p.type, p.vector);  // all written: now the matrix
        this.vocab.load();
      });
    } catch (e) {
      if (e instanceof RolledBack) return e.results;
      throw e;
    }
  }

  /** PATCH /facts/{id}: text, type, source and the validity (`superseded_by`, `valid_until`). */
  async edit(id: number, data: Record<string, unknown>, client = "", note = ""): Promise<Fact> {
    return (await this.editing(id, data, client, note)).fact;
  }

  /** The edit and its history entry's id. `check`: what must still hold, run again after the
   * await (an undo's): nothing is awaited between it and the transaction. `undoOf` (an undo, undo.ts):
   * the edit entry whose validity is put back, through the same checks (replacing.ts `undone`). */
  async editing(id: number, data: Record<string, unknown>, client = "", note = "", undoes: number | null = null,
    check?: () => void, undoOf: Entry | null = null): Promise<{ fact: Fact; entry: number }> {
    const old = this.reader.get(id);
    const text = "text" in data ? cleanText(data.text) : null;
    const type = "type" in data ? cleanType(data.type) : null;
    const source = "source" in data ? cleanSource(data.source) : null;
    const life: Validity = {};
    if ("superseded_by" in data) life.superseded_by = cleanIdNamed(data.superseded_by, "superseded_by");
    if ("valid_until" in data) life.valid_until = cleanTime(data.valid_until, "valid_until");
    // Its validity as the edit leaves it (replacing.ts), checked inside the write: a 422 (an undo's
    // 409) before the model is asked too.
    const held = (f: Fact): Held => {
      const own = ownValidUntil(this.sql, id);
      return undoOf ? undone(this.sql, f, own, undoOf) : patched(this.sql, f, own, life);
    };
    held(old);
    // Embedded only when the text differs from the one read above, and only then is there an
    // await: without one the fact is still as read, so a text that must be embedded always is.
    const [[vector], words] = text !== null && text !== old.text ? await this.embedFacts([text]) : [[null], new Map()];
    const current = this.reader.get(id);  // after the await: it may have changed or gone
    check?.();
    const to = held(current);
    const next = { text: text ?? current.text, type: type ?? current.type, source: source ?? current.source };
    const reembed = next.text !== current.text;
    // A new text or type is vector work (its duplicate check and pairs); a new text may bring new words.
    if (reembed || next.type !== current.type) this.ensureRoom(0, reembed ? [next.text] : []);
    const v = reembed ? vector! : this.vectors.vector(id);
    // One list of neighbours serves the duplicate check and the fact's new pairs (not itself).
    const row = (reembed || next.type !== current.type) && v ? this.vectors.near(v, next.type, this.least, id) : null;
    if (row) {
      const dup = this.duplicates.find(next.text, next.type, row, id);
      if (dup) {
        const existing = this.reader.get(dup[0]);
        throw new HttpError(409, "duplicate", `this edit would duplicate fact ${existing.id} (${dup[1]} match, score ${dup[2].toFixed(3)})`,
          { existing, match: dup[1], score: dup[2] });
      }
    }
    const updated = stamp(new Date());
    // A new text, type or source is reviewed only when the owner (or a trusted client) wrote it;
    // a change of validity alone leaves the review as it is.
    let reviewedAt = current.reviewed_at;
    if (next.text !== current.text || next.type !== current.type || next.source !== current.source) {
      reviewedAt = reviewedBy(client, next.source, this.state.review) ? updated : null;
    }
    return this.state.transact(() => {
      this.sql.exec("UPDATE facts SET text = ?, text_key = ?, type = ?, source = ?, updated_at = ?, valid_until = ?,"
        + " superseded_by = ?, reviewed_at = ?, own_valid_until = ? WHERE id = ?",
      next.text, textKey(next.text), next.type, next.source, updated, to.valid_until, to.superseded_by, reviewedAt, to.own_valid_until, id);
      // Its end from the fact replacing it; and what it replaces, now it may be pending again.
      settle(this.sql, this.reviewBefore, [id, ...(to.superseded_by !== null ? [to.superseded_by] : [])]);
      const validUntil = to.superseded_by === null ? to.valid_until
        : this.sql.exec<{ v: string | null }>("SELECT valid_until AS v FROM facts WHERE id = ?", id).one().v;
      const edited: Fact = {
        id, ...next, created_at: current.created_at, updated_at: updated, valid_until: validUntil, superseded_by: to.superseded_by,
        reviewed_at: reviewedAt,
      };
      if (reembed) {
        this.sql.exec("DELETE FROM facts_fts WHERE rowid = ?", id);
        this.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, next.text);
        this.sql.exec("INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
          id, this.embedder.model, v!.length, toBlob(v!));
        this.addWords([next.text], words);
      }
      if (row) {  // its pairs are those of its new text and type
        this.sql.exec("DELETE FROM pairs WHERE a = ? OR b = ?", id, id);
        storePairs(this.state, id, next.type, row);
      }
      return { fact: edited, entry: this.history.record(client, "edit", id, current, edited, note, undoes) };
    }, () => {
      if (row) this.vectors.put(id, next.type, v!);  // a new text or type: its code's row (a new source changes none)
      this.vocab.load();
    });
  }

  /** Remove the row, its FTS entry, its vector and its pairs together. The facts it replaced are
   * current again, with their own validity (none is left replaced by a fact that is not there).
   * The history keeps the whole fact, the pairs it was in and the facts it replaced, so the delete
   * can be undone (undo.ts). */
  delete(id: number, client = "", note = "", undoes: number | null = null) {
    const fact = this.reader.get(id);
    const { model, dims } = this.embedder;
    let dropped: string[] = [];
    this.state.transact(() => {
      const pairs = pairsOf(this.sql, id);  // its contradictions, open or resolved: an undo puts them back
      const replaced = replacedBy(this.sql, id);
      const kept = { ...(pairs.length ? { pairs } : {}), ...(replaced.length ? { replaced } : {}),
        ...(fact.superseded_by !== null ? { own_valid_until: ownValidUntil(this.sql, id) } : {}) };
      this.history.record(client, "delete", id, { ...fact, ...kept }, null, note, undoes);
      unreplace(this.sql, replaced.map((r) => r.id));
      this.sql.exec("DELETE FROM facts WHERE id = ?", id);
      this.sql.exec("DELETE FROM facts_fts WHERE rowid = ?", id);
      this.sql.exec("DELETE FROM pairs WHERE a = ? OR b = ?", id, id);
      this.sql.exec("DELETE FROM conflicts WHERE old = ? OR new = ?", id, id);
      // A fact the owner never approved leaves no word of its own behind (writing.py `delete`).
      if (fact.reviewed_at === null) dropped = dropUnheldWords(this.state, [fact.text]);
      return this.sql.exec("DELETE FROM vectors WHERE fact_id = ? RETURNING model, dims", id).toArray()
        .some((r) => r.model === model && r.dims === dims);
    }, (counted) => {
      this.state.forget(id, counted);
      if (dropped.length && !this.state.full) this.state.vocab.reload();
    });
    if (this.state.full) this.state.load();  // back under the budget: its vectors again
    return { deleted: id, fact };
  }

  // -- the owner's review: its questions are reviewing.ts's, run through this one door ----

  /** POST /facts/review (reviewing.ts `review`). */
  review(value: unknown, client = "", note = ""): { reviewed: number[]; entry: number | null } {
    return review(this.state, this.history, value, client, note);
  }

  /** The undo of a review entry (reviewing.ts `unreview`). */
  unreview(entry: Entry, client: string, note: string): void {
    unreview(this.state, this.history, entry, client, note);
  }

  /** The memory's own settings (the recall settings, `threshold` when it has its own duplicate
   * threshold, `review` and `proposals` when not the default), recorded with those before (writing.py
   * `set_settings`); settings equal to those in use change nothing and record nothing, but an
   * undo is always recorded (else the entry it undoes would stay not undone). */
  setSettings(fusion: Fusion | Record<string, unknown>, client = "", note = "", undoes: number | null = null): void {
    const changed = this.ctx.storage.transactionSync(() => {
      const before = this.state.settings() as Record<string, unknown>;
      if (sameJson(fusion, before) && undoes === null) return false;  // already in use: nothing to record
      this.state.setMeta("settings", JSON.stringify(fusion));
      const mode = (f: object) => ((f as { review?: { mode?: string } | null }).review)?.mode ?? "after";
      if (mode(fusion) !== mode(before)) settle(this.sql, mode(fusion) === "before");  // pending facts' replacements wait, or apply
      this.history.record(client, "settings", null, before, fusion, note, undoes);
      return true;
    });
    if (changed) this.state.useSettings(fusion as Record<string, unknown>);  // committed: recall uses them now
  }
}

// -- the step the writes and the background work (background.ts) share ------------------

/** A fact's same-type neighbours at or above the floor, from [id, exact cosine] of its near ones, into pairs. */
export function storePairs(state: State, id: number, type: FactType, near: [number, number][], keep: (other: number) => boolean = () => true): void {
  for (const [other, s] of near) {
    if (s >= state.floor && other !== id && keep(other)) {
      state.sql.exec("INSERT OR REPLACE INTO pairs (a, b, type, score) VALUES (?, ?, ?, ?)", Math.min(id, other), Math.max(id, other), type, s);
    }
  }
}

/** Whether a fact is current now (lifecycle.ts). */
