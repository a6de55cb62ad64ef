// One import at a time into a memory (issue 49 §1; docs/memory-api.md, "One import at a time"),
// memories/serving/one_import.py's twin. An import is the `POST /facts/batch` calls that carry one
// `import_id`; while it runs, a batch of another `import_id` is a 409 `import_running` naming the
// client that runs it and when its last batch was. It runs from its first batch that stores until
// a batch of it says `import_done` (an empty one ends it) or it has sent nothing for
// MEMORY_IMPORT_IDLE_SECONDS (60). A batch without `import_id` is never refused; a dry run is
// refused like any batch while another runs, and does not start one. Held by this Durable Object
// for its memory, checked and marked before the batch's first await, so two batches arriving
// together cannot both find the memory free.

import { stamp } from "../facts";
import { HttpError, invalid } from "./http";

export const IDLE_SECONDS = 60;
const IMPORT_ID = /^[A-Za-z0-9_-]{1,64}$/;

interface Running {
  importId: string;
  client: string;
  lastSeen: number;  // ms: when its last batch began or ended
  batches: number;  // its batches in flight: running whatever the clock says
}

/** The batch's `import_id` (or null) and `import_done`, as the contract says them (one_import.py `import_fields`). */
export function importFields(data: Record<string, unknown>): [string | null, boolean] {
  const importId = data.import_id ?? null;
  const done = data.import_done ?? false;
  if (importId !== null && !(typeof importId === "string" && IMPORT_ID.test(importId))) {
    throw invalid("import_id must be 1 to 64 letters, digits, _ or -");
  }
  if (typeof done !== "boolean") throw invalid("import_done must be true or false");
  if (done && importId === null) throw invalid("import_done goes with the import_id of the import it ends");
  return [importId as string | null, done];
}

export class OneImport {
  private running: Running | null = null;

  constructor(readonly idle: number = IDLE_SECONDS, private clock: () => number = Date.now) {}

  /** The import holding the memory now: one with a batch in flight, or seen within `idle`. */
  holder(): Running | null {
    const r = this.running;
    if (r !== null && r.batches === 0 && this.clock() - r.lastSeen >= this.idle * 1000) this.running = null;
    return this.running;
  }

  check(importId: string): void {
    const r = this.holder();
    if (r === null || r.importId === importId) return;
    const ago = Math.max(0, Math.round((this.clock() - r.lastSeen) / 1000));
    const at = stamp(new Date(r.lastSeen));
    const who = r.client ? ` by ${r.client}` : "";
    throw new HttpError(409, "import_running",
      `another import is running into this memory${who} (its last batch ${ago} s ago, at ${at}): this one is refused, `
      + `not queued; start it again once that import ends, or after ${this.idle} s without a batch from it`,
      { running: { client: r.client, last_seen: at, idle_seconds: this.idle } });
  }

  /** Around one batch's work (one_import.py `batch`): refused when another import runs; a batch
   * that stores marks its import running until it ends, and `done` after it succeeds ends it. */
  async batch<T>(importId: string | null, done: boolean, client: string, dryRun: boolean, work: () => Promise<T>): Promise<T> {
    if (importId === null) return work();
    this.check(importId);
    if (dryRun) {  // stores nothing: holds nothing
      const answer = await work();
      if (done) this.end(importId);
      return answer;
    }
    const r = this.holder() ?? (this.running = { importId, client, lastSeen: this.clock(), batches: 0 });
    r.batches++;
    r.lastSeen = this.clock();
    let answer: T;
    try {
      answer = await work();
    } finally {
      r.batches--;
      r.lastSeen = this.clock();
    }
    if (done) this.end(importId);
    return answer;
  }

  end(importId: string): void {
    if (this.running?.importId === importId) this.running = null;
  }
}
