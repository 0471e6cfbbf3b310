"""What produced a number: the commit and its dirty state, the kernel sources and their options.

``git_info`` records the real commit (``git rev-parse --verify HEAD``: a repository without
commits, or none at all, gives None, never the literal "HEAD"), whether any tracked or untracked
file outside ``results*/`` differs from it (with the first paths), and a hash of the source tree
(``suite/ backends/ ops/ references/``) that identifies the code where git cannot.

``recording_compiles(be)`` notes every ``be.compile(...)`` a kernel factory makes; ``kernel_source``
turns those calls, plus the op's Python modules the factory loaded (Triton kernels are Python),
into a per-row record: each file's sha256, the entry, defines and options, and one combined hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: folders whose files make up the code that produces a number
SOURCE_DIRS = ("suite", "backends", "ops", "references")


def _git(*args: str) -> tuple[int, str]:
    try:
        r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20)
        return r.returncode, r.stdout
    except (OSError, subprocess.SubprocessError):
        return 1, ""


def source_tree_hash(root: Path = ROOT) -> str:
    """sha256 (16 hex) over the paths and bytes of every .py/.cu/.cl/.wgsl file of SOURCE_DIRS."""
    h = hashlib.sha256()
    for d in SOURCE_DIRS:
        for p in sorted((root / d).rglob("*")):
            if p.is_file() and p.suffix in (".py", ".cu", ".cl", ".wgsl") and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def git_info() -> dict[str, Any]:
    """``git_sha`` (None when there is no commit to name), ``git_dirty`` (tracked changes or
    untracked files, results folders excepted), ``git_dirty_paths`` (first 20) and
    ``source_hash`` (``source_tree_hash``)."""
    code, sha = _git("rev-parse", "--verify", "--quiet", "HEAD")
    sha = sha.strip() if code == 0 and len(sha.strip()) == 40 else None
    dirty_paths: list[str] = []
    if sha:
        code, out = _git("status", "--porcelain", "--untracked-files=all")
        if code == 0:
            for line in filter(None, out.splitlines()):
                path = line[3:].split(" -> ")[-1].strip('"')
                if not path.startswith(("results/", "results-local/")):
                    dirty_paths.append(path)
    return {"git_sha": sha, "git_dirty": bool(dirty_paths) if sha else None,
            "git_dirty_paths": dirty_paths[:20], "source_hash": source_tree_hash()}


def file_sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def source_sha(path: Path) -> str:
    """sha256 of a kernel source as compiled: its ``#include "..."`` snippets expanded."""
    from backends.base import read_source

    return hashlib.sha256(read_source(path).encode()).hexdigest()


@contextlib.contextmanager
def recording_compiles(be):
    """Within the block, every ``be.compile(*args, **kwargs)`` is noted in the yielded list."""
    calls: list[tuple[tuple, dict]] = []
    orig = getattr(be, "compile", None)
    if orig is None:
        yield calls
        return

    def rec(*args, **kwargs):
        calls.append((args, kwargs))
        return orig(*args, **kwargs)

    be.compile = rec
    try:
        yield calls
    finally:
        with contextlib.suppress(AttributeError):
            del be.compile


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (int, float, str, bool)) or x is None:
        return x
    return str(x)


def kernel_source(op: str, calls: list[tuple[tuple, dict]]) -> dict[str, Any]:
    """Per-row provenance: the compiled files (sha256, entry, defines, options), the op's
    Python modules loaded so far (factories, Triton kernels), and one hash over all of it."""
    compiled = []
    for args, kwargs in calls:
        rec: dict[str, Any] = {}
        src = args[0] if args else kwargs.get("path")
        if isinstance(src, (str, Path)) and Path(src).is_file():
            full = Path(src).resolve()
            rec["file"] = str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else str(src)
            rec["sha256"] = source_sha(Path(src))
        elif src is not None:
            rec["sha256"] = hashlib.sha256(str(src).encode()).hexdigest()
        rec["args"] = _plain(list(args[1:]))
        rec["kwargs"] = _plain(kwargs)
        compiled.append(rec)
    op_dir = (ROOT / "ops" / op).resolve()
    modules = []
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if f and Path(f).resolve().parent == op_dir:
            modules.append({"file": str(Path(f).resolve().relative_to(ROOT)), "sha256": file_sha(Path(f))})
    modules.sort(key=lambda r: r["file"])
    h = hashlib.sha256(repr((compiled, modules)).encode()).hexdigest()[:16]
    return {"hash": h, "compiled": compiled, "modules": modules}
