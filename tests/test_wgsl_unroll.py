"""backends/wgsl_unroll.py: `// @unroll` loops expand to constant-indexed copies (nested, with
module constants in the bounds), and loops it cannot expand faithfully are rejected."""

from __future__ import annotations

import pytest

from backends.wgsl_unroll import unroll

SRC = """const TM: u32 = 8u;
const Q: u32 = TM / 4u;
fn f() {
    var acc: array<f32, 8>;
    // @unroll
    for (var i = 0u; i < Q; i++) {
        // @unroll
        for (var j = 1u; j < 3u; j++) { acc[i * 4u + j] = f32(i); }
    }
    for (var k = 0u; k < 4u; k++) { acc[k] = 0.0; }
}
"""


def test_nested_loops_expand_with_constant_indices():
    out = unroll(SRC)
    assert "@unroll" not in out
    for i in (0, 1):
        for j in (1, 2):
            assert f"acc[{i}u * 4u + {j}u] = f32({i}u);" in out
    assert out.count("acc[") == 5  # four unrolled stores + the unmarked loop's, left as it is
    assert "for (var k = 0u; k < 4u; k++)" in out


def test_comment_mentioning_the_marker_is_not_a_marker():
    src = "// every loop is unrolled (`// @unroll`)\nfn f() {}\n"
    assert unroll(src) == src


@pytest.mark.parametrize("body", ["if (i == 1u) { break; }", "continue;"])
def test_break_or_continue_rejected(body):
    src = f"fn f() {{\n    // @unroll\n    for (var i = 0u; i < 4u; i++) {{ {body} }}\n}}\n"
    with pytest.raises(ValueError, match="break/continue"):
        unroll(src)


def test_non_constant_bound_rejected():
    src = "fn f(n: u32) {\n    // @unroll\n    for (var i = 0u; i < n; i++) { }\n}\n"
    with pytest.raises(ValueError, match="not a constant"):
        unroll(src)


def test_marker_without_a_loop_rejected():
    with pytest.raises(ValueError, match="must precede"):
        unroll("fn f() {\n    // @unroll\n    let x = 1u;\n}\n")
