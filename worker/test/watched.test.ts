// The embedder's calls in flight (embedder.ts Watched), which GET /health reports as `embedding`:
// a client that gave up on a slow write can tell the model is what it waits for.
import { describe, expect, it } from "vitest";

import { type Embedder, Watched } from "../src/model/embedder";

describe("a watched embedder", () => {
  it("counts a call while it waits and forgets it once answered, or failed", async () => {
    let answer: (v: Float32Array[]) => void = () => {};
    let fail: (e: Error) => void = () => {};
    const stalled: Embedder = {
      model: "stalled", dims: 2,
      embed: () => new Promise<Float32Array[]>((resolve, reject) => { answer = resolve; fail = reject; }),
    };
    const watched = new Watched(stalled);
    expect(watched.model).toBe("stalled");
    expect(watched.dims).toBe(2);
    expect(watched.waiting()).toEqual({ calls: 0, waiting_ms: 0 });

    const first = watched.embed(["tea"]);
    await new Promise((r) => setTimeout(r, 30));
    const waiting = watched.waiting();
    expect(waiting.calls).toBe(1);
    expect(waiting.waiting_ms).toBeGreaterThanOrEqual(20);
    answer([Float32Array.from([1, 0])]);
    await first;
    expect(watched.waiting()).toEqual({ calls: 0, waiting_ms: 0 });

    const second = watched.embed(["coffee"]);
    fail(new Error("embedder answered 500"));
    await expect(second).rejects.toThrow(/500/);
    expect(watched.waiting()).toEqual({ calls: 0, waiting_ms: 0 });
  });
});
