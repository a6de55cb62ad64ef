"""GET /metrics: the memory's figures in Prometheus' text format (0.0.4), behind the secret like
every route but /health: its requests by route, method and status, their time in buckets, and
what the memory holds now (facts by status, those waiting for review, the open contradictions,
the bytes it holds in memory). A route is its pattern ("/facts/{id}"), never a path or a query,
so no fact's text or id reaches a label. Counters count since the process started (a Worker:
since its Durable Object did), as Prometheus expects of a counter whose process restarts.
worker/src/serving/metrics.ts is its twin: the same names, labels and buckets."""

from __future__ import annotations

import threading
from collections import Counter

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)  # seconds
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: Counter[tuple[str, str, int]] = Counter()
        self.buckets: dict[str, list[int]] = {}  # route -> a count for each bucket, then +Inf
        self.sums: Counter[str] = Counter()

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        with self.lock:
            self.requests[(route, method, status)] += 1
            counts = self.buckets.setdefault(route, [0] * (len(BUCKETS) + 1))
            counts[next((i for i, b in enumerate(BUCKETS) if seconds <= b), len(BUCKETS))] += 1
            self.sums[route] += seconds

    def text(self, held: dict) -> str:
        """The exposition: the counters, the histogram, then `held` (gauges.held's names)."""
        with self.lock:
            requests, buckets, sums = dict(self.requests), {r: list(c) for r, c in self.buckets.items()}, dict(self.sums)
        lines = ["# HELP memory_requests_total Requests answered, by route pattern, method and status.",
                 "# TYPE memory_requests_total counter"]
        lines += [f'memory_requests_total{{route="{r}",method="{m}",status="{s}"}} {n}'
                  for (r, m, s), n in sorted(requests.items())]
        lines += ["# HELP memory_request_seconds Time to answer a request, by route pattern.",
                  "# TYPE memory_request_seconds histogram"]
        for route, counts in sorted(buckets.items()):
            total = 0
            for bound, n in zip([*(f"{b:g}" for b in BUCKETS), "+Inf"], counts):
                total += n
                lines.append(f'memory_request_seconds_bucket{{route="{route}",le="{bound}"}} {total}')
            lines += [f'memory_request_seconds_sum{{route="{route}"}} {sums[route]:.6f}',
                      f'memory_request_seconds_count{{route="{route}"}} {total}']
        for name, (kind, help, values) in gauges(held).items():
            lines += [f"# HELP {name} {help}", f"# TYPE {name} {kind}"]
            lines += [f"{name}{labels} {value}" for labels, value in values]
        return "\n".join(lines) + "\n"


def gauges(held: dict) -> dict[str, tuple[str, str, list[tuple[str, int]]]]:
    """What the memory holds, from `held`: facts by status, unreviewed, open contradictions, bytes."""
    return {
        "memory_facts": ("gauge", "Facts the memory holds, by status now.",
                         [(f'{{status="{s}"}}', held["facts"][s]) for s in ("current", "replaced", "expired")]),
        "memory_unreviewed_facts": ("gauge", "Facts waiting for the owner's review (the Inbox).", [("", held["unreviewed"])]),
        "memory_open_contradictions": ("gauge", "Proposals of a replacement waiting for a decision.", [("", held["conflicts"])]),
        "memory_held_bytes": ("gauge", "Bytes the memory holds in memory (its vectors and words).", [("", held["bytes"])]),
    }


def held(memory) -> dict:
    """The engine's figures for `gauges` (one count a status, each an indexed count)."""
    def total(**kw) -> int:
        return memory.list(limit=1, **kw)[2]

    return {"facts": {s: total(status=s) for s in ("current", "replaced", "expired")},
            "unreviewed": total(reviewed=False), "conflicts": memory.conflicts(limit=1)[2],
            "bytes": sum(memory.state.memory_bytes().values())}
