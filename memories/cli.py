"""`python -m memories serve | import | export | embed-server | mcp`: a stable command line for agents and scripts."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import replace
from pathlib import Path

from .recall.ranking import PRESETS, Fusion
from . import backup
from .review.history import DEFAULT_KEEP as HISTORY_KEEP
from .recall.recall_log import DEFAULT_KEEP as RECALL_LOG_KEEP
from .store import Memory

IMPORT_BATCH = 256  # a batch is one transaction; 256 embed and scan faster a fact than 64
URL_BATCH = 100  # what one POST /facts/batch takes: a Durable Object binds 100 parameters a statement
# uvicorn's pure-Python parser, named so that installing httptools changes nothing. httptools took
# 0.3 ms off a recall's round trip (docs/performance.md, 2026-12-02), but it refuses a control
# character in a header with a bare-text 400 before the app can answer its JSON 422.
HTTP = "h11"


def env_float(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


def env_number(name: str) -> float | None:
    """A number the environment sets, or None: the model's own (models.py)."""
    value = os.environ.get(name)
    return float(value) if value else None


def fusion_from_env() -> Fusion:
    """MEMORY_FUSION picks a preset (default, seed); MEMORY_RRF_K etc. override single settings."""
    base = PRESETS[os.environ.get("MEMORY_FUSION") or "default"]
    return replace(
        base,
        k=int(env_float("MEMORY_RRF_K", base.k)),
        depth=int(env_float("MEMORY_LIST_DEPTH", base.depth)),
        kw_weight=env_float("MEMORY_KW_WEIGHT", base.kw_weight),
        vec_weight=env_float("MEMORY_VEC_WEIGHT", base.vec_weight),
    )


def open_memory(db: str, embedder_spec: str | None = None) -> Memory:
    from .model.embeddings import load_embedder

    return memory_at(db, load_embedder(embedder_spec))


def memory_at(db: str, embedder) -> Memory:
    """The memory in file db with an embedder already loaded (serve --dir shares one among all)."""
    from .model.models import numbers_for

    # Each is the model's own (models.py) unless the environment sets it.
    numbers = numbers_for(embedder.model_id if embedder else None)
    threshold, floor, expand = env_number("MEMORY_DUP_THRESHOLD"), env_number("MEMORY_REVIEW_FLOOR"), env_number("MEMORY_EXPAND")
    if not 0.5 <= (floor or numbers.floor) <= (threshold or numbers.threshold):
        raise SystemExit(f"error: MEMORY_REVIEW_FLOOR must be between 0.5 and the duplicate threshold ({threshold or numbers.threshold})")
    if expand is not None and not 0 <= expand <= 1:
        raise SystemExit("error: MEMORY_EXPAND must be between 0 (off) and 1")
    history = int(env_float("MEMORY_HISTORY", HISTORY_KEEP))  # entries kept: how far back undo reaches
    recall_log = int(env_float("MEMORY_RECALL_LOG", RECALL_LOG_KEEP))  # recalls kept; 0 logs none
    if history < 1 or recall_log < 0:
        raise SystemExit("error: MEMORY_HISTORY must be at least 1 and MEMORY_RECALL_LOG at least 0")
    budget = os.environ.get("MEMORY_BUDGET_BYTES") or None  # bytes the vectors and words in memory may take
    if budget is not None and not (budget.isdigit() and int(budget) > 0):
        raise SystemExit("error: MEMORY_BUDGET_BYTES must be a whole number of bytes")
    return Memory(db, embedder, fusion=fusion_from_env(), threshold=threshold, floor=floor, history=history,
                  recall_log=recall_log, budget=int(budget) if budget else None, expand=expand)


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .serving.service import create_app

    secret = os.environ.get("MEMORY_SECRET", "")
    if not secret:
        print("error: set MEMORY_SECRET to the shared secret clients will send as X-Memory-Secret", file=sys.stderr)
        return 2
    if args.dir:
        return serve_dir(args, secret)
    args.db = args.db or "memory.db"
    memory = open_memory(args.db)
    mode = f"model {memory.model}" if memory.embedder else "KEYWORD-ONLY (embedding model unavailable)"
    print(f"memory service: {args.db}, {memory.count()} facts, {mode}, on http://{args.host}:{args.port}", file=sys.stderr)
    uvicorn.run(create_app(memory, secret), host=args.host, port=args.port, log_level=args.log_level, http=HTTP)
    return 0


def serve_dir(args: argparse.Namespace, secret: str) -> int:
    """Every FOLDER/NAME.db at /memories/NAME/, FOLDER/default.db at the root; one model for all."""
    import uvicorn

    from .model.embeddings import load_embedder
    from .serving.memory_folder import MemoryFolder

    embedder = load_embedder()
    folder = MemoryFolder(Path(args.dir), secret, embedder, lambda path: memory_at(str(path), embedder))
    mode = f"model {embedder.model_id}" if embedder else "KEYWORD-ONLY (embedding model unavailable)"
    print(f"memory service: {args.dir}/NAME.db at /memories/NAME ({len(folder.names())} now), default.db at /, {mode}, "
          f"on http://{args.host}:{args.port}", file=sys.stderr)
    uvicorn.run(folder, host=args.host, port=args.port, log_level=args.log_level, http=HTTP)
    return 0


def import_(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    if args.format:
        return import_from(args)
    if args.dry_run:
        print("error: --dry-run goes with --from FORMAT (a backup import into an empty memory restores it as it was)",
              file=sys.stderr)
        return 2
    found = backup.read(Path(args.file))
    if found.problems:
        print("nothing imported; fix these lines first:", *found.problems[:20], sep="\n  ", file=sys.stderr)
        if len(found.problems) > 20:
            print(f"  ... and {len(found.problems) - 20} more", file=sys.stderr)
        return 1
    if args.url:
        return import_url(args, found)
    memory = open_memory(args.db)
    try:
        items = found.items
        restore = backup.restores(items, memory.count())  # exactly what was there
        if not restore:
            taken = {i["id"] for i in items if "id" in i and memory.db.execute("SELECT 1 FROM facts WHERE id = ?", (i["id"],)).fetchone()}
            if taken:
                print(f"{len(taken)} ids are in use here already; those facts get new ids", file=sys.stderr)
                items = [{k: v for k, v in i.items() if not (k == "id" and v in taken)} for i in items]
        warn(backup.history_warning(memory.stats()["history"], len(items)))
        results = []
        with tqdm(total=len(items), unit="fact", disable=args.quiet) as bar:
            for batch in memory.import_batches(items, IMPORT_BATCH, client="cli", restore=restore):
                results += batch
                bar.update(len(batch))
        if found.settings and restore:
            memory.set_settings(Fusion(**found.settings["fusion"]), "cli", found.settings.get("threshold"),
                                found.settings.get("review"), found.settings.get("proposals"))
        pairs = memory.restore_conflicts(found.conflicts, "cli") if restore else None
    finally:
        memory.close()  # as serve does: the snapshot written, the change log pruned to it
    report(args.db, items, results, found, restore, pairs)
    return 0


class LocalWrites:
    """The engine as importers.plan expects a memory: add_many with dry_run and note, as the CLI."""

    def __init__(self, memory: Memory):
        self.memory = memory

    def add_many(self, items: list[dict], dry_run: bool = False, note: str = "") -> list:
        return self.memory.add_many(items, "cli", dry_run=dry_run, note=note)

    def import_batches(self, items: list[dict], note: str = ""):
        return self.memory.import_batches(items, IMPORT_BATCH, client="cli", note=note)


def parse_mapping(text: str | None) -> dict:
    """--map text=COLUMN,type=COLUMN,..."""
    if not text:
        return {}
    pairs = [p.partition("=") for p in text.split(",") if p.strip()]
    if any(not eq or not k.strip() or not v.strip() for k, eq, v in pairs):
        raise SystemExit("error: --map is ROLE=COLUMN,... (roles: text, type, source, time)")
    return {k.strip(): v.strip() for k, _, v in pairs}


def import_from(args: argparse.Namespace) -> int:
    """Another tool's memories (importers/): a dry run, said in full, then (without --dry-run) the
    import of exactly what it showed, as unreviewed facts with source import:FORMAT."""
    from tqdm import tqdm

    from . import importers
    from .importers import plan as planning
    from .importers.table import Unmapped

    path = Path(args.file)
    try:
        if args.format == "auto":
            args.format, why = importers.detected(path)
            print(f"{path.name}: read as {args.format}, {why}", file=sys.stderr)
            if args.format == "backup" and not args.dry_run:  # restored as it was, or merged (backup.py)
                args.format = None
                return import_(args)
        parsed = importers.read(args.format, path, parse_mapping(args.map))
    except importers.Malformed as e:
        print(f"nothing imported: {e}" + (" with --map text=COLUMN" if isinstance(e, Unmapped) else ""), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"nothing imported: {e}", file=sys.stderr)
        return 1
    from .client import ImportRunning
    from .client.importing import Importing

    client = Importing(remote(args.url)) if args.url else None  # one import at a time into a running memory
    memory = None if client else open_memory(args.db)
    target = client or LocalWrites(memory)
    where = args.url or args.db
    stored = 0
    try:
        with tqdm(total=len(parsed.items), unit="fact", desc="dry run", disable=args.quiet) as bar:
            plan = planning.dry_run(target, parsed.items, parsed.refused, bar.update)
        print(dry_run_report(plan, path, where, parsed.not_memories), file=sys.stderr)
        if args.dry_run:
            return 0
        with tqdm(total=len(plan.store), unit="fact", desc="import", disable=args.quiet) as bar:
            def landed(n: int) -> None:
                nonlocal stored
                stored += n
                bar.update(n)

            results = planning.run(target, plan, f"import of {path.name} ({args.format})", landed)
    except ImportRunning as e:
        return refused(e, stored)
    finally:
        if memory is not None:
            memory.close()
        if client is not None:
            client.end()
    stored = sum(r.created for r in results)
    print(f"imported {stored} facts from {path.name} into {where}, unreviewed, source import:{args.format.split('-')[0]}"
          + ("" if stored == len(plan.store) else f" ({len(plan.store) - stored} fewer than the dry run: the memory changed since)"),
          file=sys.stderr)
    return 0


def refused(e, stored: int) -> int:
    """Another import runs into the memory: said as the memory says it, and what this one stored."""
    print(f"error: {e.message}" + (f" ({stored} facts of this import were sent before)" if stored else
                                   "; nothing of this file was stored"), file=sys.stderr)
    return 3


def dry_run_report(plan, path: Path, where: str, not_memories: list = (), shown: int = 10) -> str:
    """What the dry run found, counts first, then up to `shown` of each kind; and the lines the
    reader read as no memory (an index's summary of a file it imports), when there are any."""
    from .importers.plan import proposal_text

    c = plan.counts()
    lines = [f"{path.name} into {where}: {c['store']} would be stored, {c['merged']} merged as duplicates, "
             f"{c['proposed']} proposed as replacing a fact ({c['proposals']} proposals for the queue), {c['refused']} refused"
             + (f", {len(not_memories)} read as not memories" if not_memories else "")]
    for item, r in plan.merged[:shown]:
        lines.append(f"  line {item['line']}: {item['text'][:60]!r} is #{r.fact.id} ({r.match}) {r.fact.text[:60]!r}")
    for item in plan.repeated[:shown]:
        lines.append(f"  line {item['line']}: {item['text'][:60]!r} is an earlier line of the file")
    for item, proposals in plan.proposed[:shown]:
        fid, text = proposal_text(proposals[0])
        line = plan.line_of(item, fid)  # an earlier line of the file, which has no id yet
        lines.append(f"  line {item['line']}: {item['text'][:60]!r} may replace "
                     f"{f'line {line} of the file' if line else f'#{fid}'} {text[:60]!r}")
    for line, why in plan.refused[:shown * 2]:
        lines.append(f"  line {line}: refused: {why}")
    for line, why in not_memories[:shown]:
        lines.append(f"  line {line}: not a memory: {why}")
    return "\n".join(lines)


def warn(message: str | None) -> None:
    if message:
        print(f"note: {message}", file=sys.stderr)


def report(where: str, items: list[dict], results: list, found: backup.Backup, restore: bool,
           pairs: tuple[int, int] | None = None) -> None:
    """What an import did: a restore gives back every fact, the settings and the pairs; a merge
    names what it folded in."""
    created, settings = sum(r.created for r in results), found.settings
    if restore:
        print(f"restored {created} facts into {where} (a backup into an empty memory: every fact as it was)"
              + ("; and the backup's settings" if settings else ""), file=sys.stderr)
        if found.conflicts:
            restored, skipped = pairs or (0, 0)
            print(f"restored {restored} of the backup's {len(found.conflicts)} pairs (open contradictions and facts marked "
                  f"both true)" + (f"; {skipped} skipped: a fact of theirs is not in the backup" if skipped else ""),
                  file=sys.stderr)
        return
    merged = len(results) - created
    print(f"imported {created} facts into {where}; {merged} were already there", file=sys.stderr)
    lines = backup.merged_lines(items, results)
    if lines:
        print("merged into facts already there:", *lines, sep="\n", file=sys.stderr)
        if merged > len(lines):
            print(f"  ... and {merged - len(lines)} more", file=sys.stderr)
    if settings:
        print("the backup's settings were not applied: this memory holds facts and settings of its own", file=sys.stderr)
    if found.conflicts:
        print(f"the backup's {len(found.conflicts)} pairs (open contradictions, facts marked both true) were not put back: "
              "their ids are the backup's, and this memory's writes propose their own", file=sys.stderr)


def remote(url: str):
    from .client import MemoryClient

    secret = os.environ.get("MEMORY_SECRET", "")
    if not secret:
        raise SystemExit("error: set MEMORY_SECRET to the memory's shared secret")
    return MemoryClient(url, secret, timeout=120, name="cli")


def merge_url(client, items: list[dict], progress) -> None:
    """A merge, batch by batch, deduplicated there; a backup's ids kept where they are free.
    `progress` is given each batch's answers, as restore_backup gives them."""
    from .client import MemoryServiceError as ClientError

    for start in range(0, len(items), URL_BATCH):
        batch = items[start : start + URL_BATCH]
        try:
            answers = client.add_many(batch)
        except ClientError as e:
            if getattr(e, "code", "") != "id_taken":
                raise
            items[start : start + URL_BATCH] = [{k: v for k, v in i.items() if k != "id"} for i in batch]
            answers = client.add_many(items[start : start + URL_BATCH])
        progress(answers)


def import_url(args: argparse.Namespace, found: backup.Backup) -> int:
    """Into a running memory (the local service or a Worker), batch by batch, ids and times kept
    where they are free; a batch is one transaction there, so a failure loses no half batch. Into
    an empty memory it is a restore (`restore` batches, then the backup's settings)."""
    from tqdm import tqdm

    from .client import ImportRunning
    from .client import MemoryServiceError as ClientError
    from .client.importing import Importing
    from .client.restore import restore_backup

    client = Importing(remote(args.url))  # one import at a time into a running memory
    items, results = found.items, []
    try:
        stats = client.stats()
        restore = backup.restores(items, stats["facts"])
        warn(backup.history_warning(stats["history"], len(items)))
        with tqdm(total=len(items), unit="fact", disable=args.quiet) as bar:
            def landed(answers):  # kept as they land: an error says how many facts got in
                results.extend(answers)
                bar.update(len(answers))

            if restore:
                pairs = restore_backup(client, items, found.settings, found.conflicts, URL_BATCH, landed)[1]
            else:
                merge_url(client, items, landed)
                pairs = None
    except ImportRunning as e:
        return refused(e, len(results))
    except ClientError as e:
        print(f"error after {len(results)} facts: {e}", file=sys.stderr)
        return 1
    finally:
        client.end()
    report(args.url, items, results, found, restore, pairs)
    return 0


def backup_on_schedule(args: argparse.Namespace) -> int:
    from . import scheduled_backup

    try:
        interval = scheduled_backup.every(args.every) if args.every else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.keep < 1:
        print("error: --keep is at least 1", file=sys.stderr)
        return 2
    if args.url:
        client = remote(args.url)
        write = lambda out: backup.write_remote(client, out)  # noqa: E731
    else:
        def write(out):  # opened for each backup and closed after: the file may be served meanwhile
            memory = Memory(args.db, embedder=None)
            try:
                return backup.write_memory(memory, out)
            finally:
                memory.close()
    name = scheduled_backup.name_of(None if args.url else args.db, args.url)
    return scheduled_backup.run(write, Path(args.dir), name, args.keep, interval, lambda s: print(s, file=sys.stderr, flush=True))


def embed_server(args: argparse.Namespace) -> int:
    import uvicorn

    from .model.embed_server import create_embed_app
    from .model.embeddings import load_embedder

    secret = os.environ.get("MEMORY_SECRET", "")
    if not secret:
        print("error: set MEMORY_SECRET to the shared secret the Worker sends as X-Memory-Secret", file=sys.stderr)
        return 2
    embedder = load_embedder()
    if embedder is None:
        print("error: the embedding model did not load", file=sys.stderr)
        return 1
    print(f"embed server: {embedder.model_id} ({embedder.dims} dims) on http://{args.host}:{args.port}/embed", file=sys.stderr)
    uvicorn.run(create_embed_app(embedder, secret), host=args.host, port=args.port, log_level=args.log_level, http=HTTP)
    return 0


def tcp_port(value: str) -> int:
    """1-65535: a 0 would be a port nobody is told."""
    if not (value.isdigit() and 1 <= int(value) <= 65535):
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (1-65535)")
    return int(value)


def mcp(args: argparse.Namespace) -> int:
    from .serving.mcp_server import main as serve_mcp

    return serve_mcp(args.memory, args.http)


def export(args: argparse.Namespace) -> int:
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.url:
            backup.write_remote(remote(args.url), out)
        else:
            memory = Memory(args.db, embedder=None)  # export reads rows only: no model needed
            try:
                backup.write_memory(memory, out)
            finally:
                memory.close()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memories", description="Memory Desk's memory service.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("serve", help="serve the HTTP contract (secret from MEMORY_SECRET)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--db", help="one memory at the root (default: memory.db)")
    where.add_argument("--dir", help="many: FOLDER/NAME.db at /memories/NAME/, FOLDER/default.db at the root")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8787)
    p.add_argument("--log-level", default="info")
    p.set_defaults(func=serve)

    p = sub.add_parser("import", help="add the facts of a JSONL backup, or (--from) another tool's memories")
    p.add_argument("file")
    p.add_argument("--from", dest="format", help="the file's format: auto (found from its content), list, chatgpt-list, claude-list, csv, json, "
                   "jsonl, mem0, letta (passages or an agent file), mcp-memory, claude-ai (an export's memories.json), "
                   "claude-code (a memory folder, or a zip of it)")
    p.add_argument("--map", help="with --from csv/json/jsonl: which column is each of text, type, source, time "
                                 "(text=memory,time=created)")
    p.add_argument("--dry-run", action="store_true", help="with --from: say what would be stored, merged, proposed and "
                                                           "refused, and store nothing")
    p.add_argument("--db", default="memory.db")
    p.add_argument("--url", help="a running memory instead of --db: the service or a Worker (MEMORY_SECRET)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=import_)

    p = sub.add_parser("export", help="write every fact as JSONL, oldest first")
    p.add_argument("--db", default="memory.db")
    p.add_argument("--url", help="a running memory instead of --db: the service or a Worker (MEMORY_SECRET)")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(func=export)

    p = sub.add_parser("backup", help="write a checked backup into DIR, keep the last --keep, and with --every again and again")
    p.add_argument("dir", help="the folder of backups: memory-NAME-TIME.jsonl")
    p.add_argument("--db", default="memory.db")
    p.add_argument("--url", help="a running memory instead of --db: the service or a Worker (MEMORY_SECRET)")
    p.add_argument("--keep", type=int, default=14, help="backups of this memory kept, the newest (default 14)")
    p.add_argument("--every", help="run until stopped, one backup every 1d, 12h, 30m ... (default: once)")
    p.set_defaults(func=backup_on_schedule)

    p = sub.add_parser("embed-server", help="serve the embedding model over HTTP for a local Worker (EMBEDDER=http)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8788)
    p.add_argument("--log-level", default="warning")
    p.set_defaults(func=embed_server)

    p = sub.add_parser("mcp", help="serve a memory as MCP tools over stdio, or HTTP with --http (MEMORY_URL, MEMORY_SECRET)")
    p.add_argument("--memory", help="one of a Worker's memories, by name (default: MEMORY_NAME, or the URL's own)")
    p.add_argument("--http", type=tcp_port, metavar="PORT",
                   help="streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio; every request needs "
                        "Authorization: Bearer MCP_TOKEN (generated into local.env when unset)")
    p.set_defaults(func=mcp)

    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request of an import --url
    return args.func(args)
