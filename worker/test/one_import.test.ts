// serving/one_import.ts on its own, with a clock the test moves (one_import.py's twin, tested as
// tests/test_one_import.py tests it; the contract tests run both memories over HTTP).
import { describe, expect, it } from "vitest";

import { HttpError } from "../src/serving/http";
import { OneImport } from "../src/serving/one_import";

describe("one import at a time", () => {
  it("is held by a batch in flight however long it takes, then for the idle time", async () => {
    let now = 100_000;
    const one = new OneImport(60, () => now);
    await one.batch("a", false, "cli", false, async () => {
      now += 600_000;  // a slow model
      expect(() => one.check("b")).toThrow(HttpError);
    });
    now += 59_000;
    expect(() => one.check("b")).toThrow(/its last batch 59 s ago/);
    try {
      one.check("b");
    } catch (e) {
      expect((e as HttpError).status).toBe(409);
      expect((e as HttpError).code).toBe("import_running");
      expect((e as HttpError).extra).toMatchObject({ running: { client: "cli", idle_seconds: 60 } });
    }
    now += 1_000;
    expect(() => one.check("b")).not.toThrow();  // idle 60 s: free
  });

  it("is not ended by a failed last batch, and a dry run or an ordinary batch holds nothing", async () => {
    const one = new OneImport(60, () => 0);
    await expect(one.batch("a", true, "cli", false, async () => { throw new Error("the batch failed"); })).rejects.toThrow();
    expect(one.holder()?.importId).toBe("a");
    one.end("b");  // another's end changes nothing
    expect(one.holder()?.importId).toBe("a");
    one.end("a");
    await one.batch("b", false, "cli", true, async () => null);
    expect(one.holder()).toBeNull();
    await one.batch(null, false, "agent", false, async () => null);
    expect(one.holder()).toBeNull();
  });
});
