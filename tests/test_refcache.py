"""suite/refcache.py: large inputs and references computed once and shared by the backend
workers through files, identical to what the seed generates, evicted beyond the budget."""

from __future__ import annotations

from types import SimpleNamespace
from unittest import mock

import numpy as np

from suite import refcache
from suite.registry import discover, get_spec
from suite.spec import InputRng


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
    want = spec.make_inputs(case, InputRng(case.seed))
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


def test_large_draws_fill_in_parallel_and_depend_on_the_seed_only(monkeypatch):
    """InputRng: a large draw is the same for a seed whatever the core count (its pieces come
    from spawned child generators), differs between seeds and between successive draws, has the
    asked dtype, shape and range; small draws are the plain generator's."""
    monkeypatch.setattr(InputRng, "PARALLEL_MIN", 1000)
    monkeypatch.setattr(InputRng, "CHUNK", 256)
    draws = {
        "normal": lambda r: r.standard_normal((3, 700), dtype=np.float32),
        "random": lambda r: r.random(2001),
        "uniform": lambda r: r.uniform(-2.0, 3.0, size=2001),
        "integers": lambda r: r.integers(-5, 5, size=2001, dtype=np.int32, endpoint=True),
    }
    for name, draw in draws.items():
        a = draw(InputRng(11))
        with mock.patch("os.cpu_count", return_value=1):
            b = draw(InputRng(11))
        r = InputRng(11)
        first, second = draw(r), draw(r)
        assert np.array_equal(a, b) and np.array_equal(a, first), name
        assert not np.array_equal(first, second) and not np.array_equal(a, draw(InputRng(12))), name
        plain = draw(np.random.default_rng(11))
        assert (a.dtype, a.shape) == (plain.dtype, plain.shape), name
    x = draws["normal"](InputRng(1))
    assert abs(float(x.mean())) < 0.1 and abs(float(x.std()) - 1) < 0.1
    u = draws["uniform"](InputRng(1))
    assert u.min() >= -2.0 and u.max() < 3.0 and u.max() > 2.9
    k = draws["integers"](InputRng(1))
    assert k.min() == -5 and k.max() == 5
    small = InputRng(3).standard_normal(999, dtype=np.float32)
    assert np.array_equal(small, np.random.default_rng(3).standard_normal(999, dtype=np.float32))


def test_cache_key_follows_the_input_generator_and_references(monkeypatch, tmp_path):
    """A cached input set or reference is keyed by the sources that make it: the op's spec.py,
    suite/spec.py (InputRng draws every input) and references/ — editing any gives a new key."""
    for f in ("ops/op/spec.py", "suite/spec.py", "references/r.py"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("# v1\n")
    monkeypatch.setattr(refcache, "ROOT", tmp_path)
    seen = {refcache._sources_hash("op")}
    for f in ("ops/op/spec.py", "suite/spec.py", "references/r.py"):
        (tmp_path / f).write_text("# v2\n")
        seen.add(refcache._sources_hash("op"))
    assert len(seen) == 4
