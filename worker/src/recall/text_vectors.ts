// The vectors of the texts recall embeds, kept between recalls, least recently used out first
// (memories/recall/text_vectors.py). A text's vector depends on the text and the model only, and
// recall's texts repeat: an agent asks its questions again, and the rerank embeds the same top
// facts without the same shared words for different questions. Each Workers AI call is billed
// (neurons) and waited for, so a recall whose texts are all held makes none.
//
// Bounded in bytes (LIMIT), counted in /stats' `memory_parts`. A forget for good empties it
// (forgetting.ts): a forgotten fact's text must not outlive it here.

export const LIMIT = 4 * 2 ** 20;  // about 1,300 bge-base vectors (768 dims) with their texts
// Per entry beside the text and the floats: the map's slot and links, and a Float32Array's own object (a bound).
const ENTRY = 160;

export class TextVectors {
  private held = new Map<string, Float32Array>();  // in use order: the first is the least recently used
  private used = 0;
  generation = 0;  // one more at each clear: a recall that read its texts before one keeps none
  hits = 0;
  misses = 0;

  constructor(readonly limit = LIMIT) {}

  /** The vectors of `texts`, in order: those held, and one call of `embed` for the rest (none
   * when every one is held). `since`: the generation when the texts were read; after a clear
   * since (a forget during the await), the fresh vectors are not kept. */
  async embed(texts: string[], embed: (texts: string[]) => Promise<Float32Array[]>, since?: number): Promise<Float32Array[]> {
    const found = new Map<string, Float32Array>();
    for (const t of texts) {
      const v = this.held.get(t);
      if (v) {
        this.held.delete(t);  // to the end: used now
        this.held.set(t, v);
        found.set(t, v);
      }
    }
    const lacking = [...new Set(texts.filter((t) => !found.has(t)))];
    if (lacking.length) {
      const fresh = await embed(lacking);
      lacking.forEach((t, i) => {
        found.set(t, fresh[i]);
        if (since === undefined || since === this.generation) this.put(t, fresh[i]);
      });
    }
    this.hits += texts.length - lacking.length;
    this.misses += lacking.length;
    return texts.map((t) => found.get(t)!);
  }

  private put(text: string, vector: Float32Array): void {
    if (this.held.has(text)) return;  // (held by a recall that answered during this one's await)
    const own = vector.slice();  // its own buffer: not a view keeping the whole batch's alive
    const size = sizeOf(text, own);
    if (size > this.limit) return;
    this.held.set(text, own);
    this.used += size;
    for (const [old, v] of this.held) {
      if (this.used <= this.limit) break;
      this.held.delete(old);
      this.used -= sizeOf(old, v);
    }
  }

  /** The bytes held (a bound: the text as UTF-16, the floats, and ENTRY). */
  bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.held.size;
  }

  clear(): void {
    this.held.clear();
    this.used = 0;
    this.generation++;
  }
}

export const sizeOf = (text: string, vector: Float32Array) => 2 * text.length + vector.byteLength + ENTRY;
