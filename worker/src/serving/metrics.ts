// GET /metrics: the memory's figures in Prometheus' text format (0.0.4), behind the secret, as
// memories/serving/metrics.py serves them: the same names, labels and buckets. A route is its pattern
// (the contract's path, "/facts/{id}"), never a path or a query. The counters count since this
// Durable Object started; on Cloudflare the clock moves only across I/O, so a request that waits
// on nothing (no model call, no fetch) is timed 0 and falls in the first bucket.
import openapi from "../../../docs/openapi.json";

export const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];  // seconds
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
const ROUTES = new Set(Object.keys(openapi.paths));
const UNCOUNTED = new Set(["/health", "/openapi.json"]);  // (answered without the memory when asked without the secret)

export interface Held {
  facts: { current: number; replaced: number; expired: number };
  unreviewed: number;
  conflicts: number;
  bytes: number;
}

/** The contract's pattern of a path: "/facts/12/neighbours" is "/facts/{id}/neighbours"; null when no route has it. */
export function routeOf(path: string): string | null {
  const pattern = path.replace(/\/\d+(?=\/|$)/g, "/{id}");
  return ROUTES.has(pattern) && !UNCOUNTED.has(pattern) ? pattern : null;
}

export class Metrics {
  private requests = new Map<string, number>();  // JSON [route, method, status] -> count
  private buckets = new Map<string, number[]>();  // route -> a count a bucket, then +Inf
  private sums = new Map<string, number>();

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = JSON.stringify([route, method, status]);
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const counts = this.buckets.get(route) ?? new Array(BUCKETS.length + 1).fill(0);
    const at = BUCKETS.findIndex((b) => seconds <= b);
    counts[at === -1 ? BUCKETS.length : at] += 1;
    this.buckets.set(route, counts);
    this.sums.set(route, (this.sums.get(route) ?? 0) + seconds);
  }

  text(held: Held): string {
    const lines = ["# HELP memory_requests_total Requests answered, by route pattern, method and status.",
      "# TYPE memory_requests_total counter"];
    const requests = [...this.requests].map(([k, n]) => [...(JSON.parse(k) as [string, string, number]), n] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] - b[2]));
    for (const [r, m, s, n] of requests) lines.push(`memory_requests_total{route="${r}",method="${m}",status="${s}"} ${n}`);
    lines.push("# HELP memory_request_seconds Time to answer a request, by route pattern.", "# TYPE memory_request_seconds histogram");
    for (const route of [...this.buckets.keys()].sort()) {
      let total = 0;
      this.buckets.get(route)!.forEach((n, i) => {
        total += n;
        lines.push(`memory_request_seconds_bucket{route="${route}",le="${i < BUCKETS.length ? BUCKETS[i] : "+Inf"}"} ${total}`);
      });
      lines.push(`memory_request_seconds_sum{route="${route}"} ${this.sums.get(route)!.toFixed(6)}`,
        `memory_request_seconds_count{route="${route}"} ${total}`);
    }
    lines.push("# HELP memory_facts Facts the memory holds, by status now.", "# TYPE memory_facts gauge",
      ...(["current", "replaced", "expired"] as const).map((s) => `memory_facts{status="${s}"} ${held.facts[s]}`),
      "# HELP memory_unreviewed_facts Facts waiting for the owner's review (the Inbox).", "# TYPE memory_unreviewed_facts gauge",
      `memory_unreviewed_facts ${held.unreviewed}`,
      "# HELP memory_open_contradictions Proposals of a replacement waiting for a decision.",
      "# TYPE memory_open_contradictions gauge", `memory_open_contradictions ${held.conflicts}`,
      "# HELP memory_held_bytes Bytes the memory holds in memory (its vectors and words).", "# TYPE memory_held_bytes gauge",
      `memory_held_bytes ${held.bytes}`);
    return lines.join("\n") + "\n";
  }
}
