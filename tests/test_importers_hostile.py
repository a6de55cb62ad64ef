"""Files that broke the importers where they promise a refusal with its line (issue 45 §8): JSON
nested past the decoder's recursion limit, a lone surrogate in a mapped column, a line separator
inside a JSON string, a CSV field past csv's 128 KB, a long run of spaces in a plain list. Each is
the line or the file refused with its reason, the rest read, in linear time."""

import json
import os
import subprocess
import sys
import time

import pytest

from memories import importers
from memories.importers import plan as planning
from tests.test_importers import ROOT, Writes, texts


def written(tmp_path, content: str, name: str = "file") -> object:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("format", ["json", "mem0", "letta"])
def test_a_json_document_nested_too_deeply_is_refused_with_its_reason(tmp_path, format):
    path = written(tmp_path, "[" * 100_000)
    with pytest.raises(importers.Malformed, match="nested too deeply"):
        importers.read(format, path)


def test_a_jsonl_line_nested_too_deeply_is_refused_on_its_own_and_the_rest_read(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    path = written(tmp_path, '{"text": "The owner keeps bees."}\n' + deep + '\n{"text": "The owner rows on Sundays."}\n\n')
    parsed = importers.read("jsonl", path)
    assert texts(parsed) == ["The owner keeps bees.", "The owner rows on Sundays."]
    assert [i["line"] for i in parsed.items] == [1, 3]
    assert len(parsed.refused) == 1 and parsed.refused[0][0] == 2 and "nested too deeply" in parsed.refused[0][1]


def test_the_cli_refuses_a_deeply_nested_file_with_its_reason_and_no_traceback(tmp_path):
    path = written(tmp_path, "[" * 100_000, "deep.json")
    done = subprocess.run([sys.executable, "-m", "memories", "import", str(path), "--from", "json", "--dry-run",
                           "--db", str(tmp_path / "m.db"), "--quiet"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, cwd=ROOT)
    assert done.returncode == 1
    assert "nothing imported: JSON nested too deeply" in done.stderr and "Traceback" not in done.stderr


def test_a_lone_surrogate_in_a_mapped_column_refuses_its_line_and_the_dry_run_checks_the_rest(tmp_path, fake_memory):
    lines = ['{"text": "The owner\'s boat is called Heron.", "from": "notes"}',
             '{"text": "The owner\'s kayak is yellow.", "from": "notes \\ud800"}',  # JSON's escape: a lone surrogate
             '{"text": "The owner\'s oars are carbon.", "from": "notes"}']
    parsed = importers.read("jsonl", written(tmp_path, "\n".join(lines)), {"source": "from"})
    assert [i["line"] for i in parsed.items] == [1, 3]
    assert parsed.refused == [(2, "source contains a lone surrogate: it is not valid Unicode")]
    plan = planning.dry_run(Writes(fake_memory), parsed.items, parsed.refused)  # the memory would refuse the whole batch
    assert [i["line"] for i in plan.store] == [1, 3] and plan.refused == parsed.refused
    letta = importers.read("letta", written(tmp_path, json.dumps([{"text": "The owner sails.", "tags": ["\ud800"]},
                                                                  {"text": "The owner swims."}]), "letta.json"))
    assert texts(letta) == ["The owner swims."] and letta.refused == [(1, "source contains a lone surrogate: it is not valid Unicode")]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085", "\x0c"])
def test_lines_are_split_at_newlines_only_so_a_separator_inside_a_string_is_kept(tmp_path, separator):
    jsonl = written(tmp_path, json.dumps({"text": f"The owner's motto:{separator}keep going."}, ensure_ascii=False)
                    + "\r\n" + json.dumps({"text": "The owner likes figs."}) + "\r\n", "a.jsonl")
    parsed = importers.read("jsonl", jsonl)
    assert texts(parsed) == [f"The owner's motto:{separator}keep going.", "The owner likes figs."]
    assert [i["line"] for i in parsed.items] == [1, 2] and parsed.refused == []
    listed = importers.read("chatgpt-list", written(tmp_path, f"- Likes tea{separator}and toast.\r\n- Walks daily.\n", "a.txt"))
    assert texts(listed) == [f"Likes tea{separator}and toast.", "Walks daily."] and [i["line"] for i in listed.items] == [1, 2]


def test_a_csv_field_over_128_kb_refuses_its_row_with_its_line_and_reads_the_rest(tmp_path):
    content = ("text,type\nThe owner's locker is 41.,fact\n" + "x" * 140_000 + ",fact\n"
               'The owner\'s bike is green.,fact\n"' + "y" * 200_000 + '\nstill the same field",fact\nThe owner naps.,fact\n')
    parsed = importers.read("csv", written(tmp_path, content, "big.csv"))
    assert texts(parsed) == ["The owner's locker is 41.", "The owner's bike is green.", "The owner naps."]
    assert [i["line"] for i in parsed.items] == [2, 4, 7]
    assert parsed.refused == [(3, "text is 140000 characters; the limit is 8000"),
                              (6, "text is 200021 characters; the limit is 8000")]  # a quoted field: the line it ends on


def best_of_three(read) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        read()
        times.append(time.perf_counter() - start)
    return min(times)


def test_a_long_run_of_spaces_in_a_plain_list_reads_in_linear_time(tmp_path):
    spaces = written(tmp_path, " " * 2_000_000 + "a\n", "spaces.txt")
    letters = written(tmp_path, "a" * 2_000_001 + "\n", "letters.txt")  # the same size, no run of spaces: the baseline
    spaced = best_of_three(lambda: importers.read("chatgpt-list", spaces))
    baseline = best_of_three(lambda: importers.read("chatgpt-list", letters))
    assert texts(importers.read("chatgpt-list", spaces)) == ["a"]
    # Before: the heading's pattern tried up to 60 characters at each space, 0.5 s here against 2 ms.
    assert spaced < 20 * baseline + 0.01, (spaced, baseline)
