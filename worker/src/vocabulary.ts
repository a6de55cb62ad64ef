// The memory's own words, each embedded alone: what a query term expands to (recall.ts
// `expand`), as memories/vocabulary.py keeps them. A word joins in the transaction of the first
// fact that holds it and stays (a word no fact holds any more matches nothing, and recall drops
// it). The table is the truth; the matrix reads the rows it lacks after each write commits, so
// a rolled-back write leaves nothing behind.

import { vocabularyWords } from "./recall";
import { MAP_ENTRY_BYTES, VectorIndex } from "./vectors";

export const CANDIDATES = 8;  // closest words per query term handed to `expand`, which keeps at most 3

export class Vocabulary {
  words: string[] = [];
  known = new Map<string, number>();  // a word's row in `index`
  // The words' vectors, each row keyed by the word's place in `words` (the type means nothing here).
  index: VectorIndex;
  last = 0;  // the highest row id read
  chars = 0;  // the words' UTF-16 code units, for `bytes`
  off = false;  // holding none (`empty`) until `reload`

  constructor(private sql: SqlStorage, private model: string, private dims: number) {
    this.index = new VectorIndex(dims);
  }

  /** Read the words written since the last call. */
  load(): void {
    if (this.off) return;
    const rows = this.sql.exec("SELECT id, word, embedding FROM words WHERE id > ? AND model = ? ORDER BY id", this.last, this.model);
    for (const r of rows) {
      this.last = r.id as number;
      const word = r.word as string;
      if (this.known.has(word)) continue;
      this.known.set(word, this.words.length);
      this.index.put(this.words.length, "fact", new Float32Array(r.embedding as ArrayBuffer));
      this.words.push(word);
      this.chars += word.length;
    }
  }

  /** The bytes the vocabulary holds: its matrix exactly, its words and their map as an upper bound. */
  bytes(): number {
    return this.index.bytes() + wordBytes(this.words.length, this.chars);
  }

  /** The bytes it would hold with `more` words of `chars` code units in all. */
  bytesWith(more: number, chars: number): number {
    return this.index.bytesWith(more) + wordBytes(this.words.length + more, this.chars + chars);
  }

  /** Read every word again (after the table was rebuilt). */
  reload(): void {
    this.words = [];
    this.known = new Map();
    this.index = new VectorIndex(this.dims);
    this.last = 0;
    this.chars = 0;
    this.off = false;
    this.load();
  }

  /** Hold no word (a memory past its budget: state.ts). */
  empty(): void {
    this.words = [];
    this.known = new Map();
    this.index = new VectorIndex(this.dims);
    this.last = 0;
    this.chars = 0;
    this.off = true;
  }

  /** The words of `texts` the vocabulary lacks, each once, in order. */
  missing(texts: string[]): string[] {
    return [...new Set(texts.flatMap(vocabularyWords))].filter((w) => !this.known.has(w));
  }

  /** The stored vectors of those `words` the vocabulary holds: a query term the memory already
   * uses needs no model call (each word was embedded alone, as a query term is; writing.py too). */
  vectors(words: string[]): Map<string, Float32Array> {
    return new Map(words.filter((w) => this.known.has(w)).map((w) => [w, this.index.vector(this.known.get(w)!)!]));
  }

  /** Store words inside the caller's write transaction (a word already there is kept). */
  add(words: string[], vectors: Float32Array[]): void {
    words.forEach((w, i) => this.sql.exec("INSERT OR IGNORE INTO words (word, model, embedding) VALUES (?, ?, ?)",
      w, this.model, vectors[i].slice().buffer));
  }

  /** Forget every word, inside a write (a `reload` after it commits). */
  clear(): void {
    this.sql.exec("DELETE FROM words");
  }

  /** For each term vector, its CANDIDATES closest words with their cosines. */
  closest(termVectors: Float32Array[]): [string, number][][] {
    return termVectors.map((q) => this.index.search(q, null, CANDIDATES).map(([i, s]): [string, number] => [this.words[i], s]));
  }
}

/** An upper bound on `count` words of `chars` UTF-16 code units: each string's header and two
 * bytes a code unit, rounded up, its slot in `words` (which grows by half) and its entry in `known`. */
export function wordBytes(count: number, chars: number): number {
  return count * (24 + 8 * 1.5 + MAP_ENTRY_BYTES) + 2 * chars;
}
