"""Kernel sources with ``#include "name"`` (backends.base.read_source): shared snippets of
ops/common/ expanded once, the compiled text and the row provenance both see them."""

from __future__ import annotations

import pytest

from backends import base
from suite import provenance


def test_include_expands_from_the_folder_then_common_once(tmp_path, monkeypatch):
    common = tmp_path / "common"
    common.mkdir()
    (common / "shared.h").write_text("int shared_one;\n#include \"inner.h\"")
    (common / "inner.h").write_text("int inner_one;")
    (tmp_path / "local.h").write_text("int local_one;")
    k = tmp_path / "k.cu"
    k.write_text('#include <cuda_fp16.h>\n#include "local.h"\n#include "shared.h"\n'
                 '  #include "inner.h"\nint x;')
    monkeypatch.setattr(base, "COMMON_SOURCES", common)
    src = base.read_source(k)
    assert "#include <cuda_fp16.h>" in src  # system headers are the compiler's
    assert src.count("int local_one;") == 1 and src.count("int shared_one;") == 1
    assert src.count("int inner_one;") == 1 and "already included" in src  # once, however reached
    assert src.rstrip().endswith("int x;")


def test_missing_include_names_where_it_looked(tmp_path):
    k = tmp_path / "k.cl"
    k.write_text('#include "nowhere.h"\n')
    with pytest.raises(FileNotFoundError, match=r'k.cl: #include "nowhere.h" not found'):
        base.read_source(k)


def test_provenance_hash_covers_included_snippets(tmp_path, monkeypatch):
    monkeypatch.setattr(base, "COMMON_SOURCES", tmp_path)
    (tmp_path / "s.h").write_text("int a;")
    k = tmp_path / "k.cu"
    k.write_text('#include "s.h"\n')
    before = provenance.source_sha(k)
    (tmp_path / "s.h").write_text("int b;")
    assert provenance.source_sha(k) != before


def test_shared_helpers_are_defined_once_in_the_repo():
    """The mma.sync kernels take their cp.async/ldmatrix/mma helpers from ops/common, the OpenCL
    and WGSL matmul/attention kernels their fp16/bf16 conversions."""
    root = base.COMMON_SOURCES.parent.parent
    for f in ("ops/matmul/matmul_mma.cu", "ops/attention/attention.cu"):
        text = (root / f).read_text()
        assert '#include "mma_sm80.cuh"' in text and "ldmatrix.sync" not in text, f
        assert base.read_source(root / f).count("ldmatrix.sync.aligned.m8n8.x4.shared") == 1
    for f, snippet in (("ops/matmul/matmul.cl", "f16.cl"), ("ops/attention/attention.cl", "f16.cl"),
                       ("ops/matmul/matmul.wgsl", "f16.wgsl"), ("ops/attention/attention.wgsl", "f16.wgsl"),
                       ("ops/gemv_lowbit/gemv_lowbit.wgsl", "f16.wgsl"),
                       ("ops/gemv_lowbit/gemv_lowbit_dp4a.wgsl", "f16.wgsl")):
        text = (root / f).read_text()
        assert f'#include "{snippet}"' in text, f
        assert "vstore_half_rte(v" not in text and "fn f2half" not in text and "fn f2h(" not in text, f


def test_opencl_fp16_vectors_go_through_halfvec():
    """OpenCL fp16 vectors are read and written through ops/common/halfvec.cl (one raw global
    access, converted in private memory): NVIDIA's OpenCL split vload(a)_halfN / vstore(a)_halfN on
    global memory into narrower accesses (fp16 GEMV x at half speed, vector_add vec4 at 83 %).
    Elsewhere a vector form may only convert private memory (a `__private half*` argument)."""
    import re

    root = base.COMMON_SOURCES.parent.parent
    call = re.compile(r"\bv(?:load|store)a?_half(?:2|3|4|8|16)(?:_rt[ezpn])?\s*\(([^;]*)")
    bad = []
    for f in sorted(root.glob("ops/**/*.cl")):
        if f.name == "halfvec.cl":
            continue
        for n, line in enumerate(f.read_text().splitlines(), 1):
            code = line.split("//", 1)[0]
            bad += [f"{f.relative_to(root)}:{n}: {line.strip()}" for m in call.finditer(code)
                    if "__private half" not in m.group(1)]
    assert not bad, "\n".join(bad)
    for f in ("ops/vector_add/vector_add.cl", "ops/matmul/matmul.cl", "ops/reduction/reduction.cl",
              "ops/gemv_lowbit/gemv_lowbit.cl"):
        assert '#include "halfvec.cl"' in (root / f).read_text(), f
