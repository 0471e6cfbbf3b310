"""suite/refcache.py: large inputs and references computed once and shared by the backend
workers through files, identical to what the seed generates, evicted beyond the budget."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from suite import refcache
from suite.registry import discover, get_spec


def _setup(monkeypatch, tmp_path, min_in=1, min_ref=1):
    monkeypatch.setenv("SOLBENCH_CACHE", str(tmp_path))
    monkeypatch.setattr(refcache, "MIN_INPUT_BYTES", min_in)
    monkeypatch.setattr(refcache, "MIN_BYTES", min_ref)
    discover()
    return get_spec("vector_add")


def test_inputs_shared_through_a_file_and_equal_to_the_seeds(monkeypatch, tmp_path):
    spec = _setup(monkeypatch, tmp_path)
    case = spec.case("n=1025")
    calls = []
    counting = SimpleNamespace(name=spec.name, signature=spec.signature,
                               inputs=lambda c: calls.append(1) or spec.inputs(c))
    a = refcache.inputs(counting, case)
    b = refcache.inputs(counting, case)  # as another worker would: from the file
    assert len(calls) == 1 and len(list((tmp_path / "inputs").glob("*.npz"))) == 1
    want = spec.make_inputs(case, np.random.default_rng(case.seed))
    for k in want:
        assert np.array_equal(a[k], want[k]) and np.array_equal(b[k], want[k]) and b[k].flags.writeable
    ref = refcache.reference(spec, case, a)
    assert np.array_equal(ref["c"], refcache.reference(spec, case, b)["c"])
    assert len(list((tmp_path / "refs").glob("*.npz"))) == 1


def test_small_inputs_are_not_stored(monkeypatch, tmp_path):
    spec = _setup(monkeypatch, tmp_path, min_in=1 << 40)
    refcache.inputs(spec, spec.case("n=1025"))
    assert not (tmp_path / "inputs").exists() or not list((tmp_path / "inputs").glob("*.npz"))


def test_input_files_evicted_oldest_first_beyond_the_budget(monkeypatch, tmp_path):
    spec = _setup(monkeypatch, tmp_path)
    cases = [spec.case(n) for n in ("n=1025", "n=4206337")]
    refcache.inputs(spec, cases[0])
    one = sum(f.stat().st_size for f in (tmp_path / "inputs").glob("*.npz"))
    monkeypatch.setenv("SOLBENCH_INPUT_CACHE_GB", str((one + 1) / 2**30))  # room for the small one
    refcache.inputs(spec, cases[1])  # bigger than the budget alone: kept, the older one evicted
    left = list((tmp_path / "inputs").glob("*.npz"))
    assert len(left) == 1 and left[0].stat().st_size > one


def test_a_damaged_file_is_regenerated(monkeypatch, tmp_path):
    spec = _setup(monkeypatch, tmp_path)
    case = spec.case("n=1025")
    refcache.inputs(spec, case)
    (f,) = (tmp_path / "inputs").glob("*.npz")
    f.write_bytes(b"not a zip")
    got = refcache.inputs(spec, case)
    want = spec.inputs(case)
    assert all(np.array_equal(got[k], want[k]) for k in want)
