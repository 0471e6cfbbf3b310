"""Loop unrolling for WGSL, which has no ``#pragma unroll``.

A ``for`` loop on the line after a ``// @unroll`` comment, of the form
``for (var i = START; i < END; i++) { BODY }`` with START and END constant (integer literals and
module-scope ``const`` names of the source, combined with + - * / % and parentheses), is
replaced by END − START copies of ``{ BODY }`` with ``i`` replaced by the literal ``k`` (with
START's suffix, ``u``/``i``). Loops nest; the innermost are expanded first. A body holding
``break`` or ``continue`` is rejected (it would change meaning once unrolled).

Why: a function-scope array indexed by a loop counter (an accumulator tile, a register tile)
stays an array in the SPIR-V that naga emits, and a driver that does not unroll the loop itself
keeps it in local memory; after unrolling every index is a constant expression, which
compilers promote to registers. Measured on the H200 (Vulkan, NVIDIA 580): see
ops/matmul/matmul.wgsl and the README.
"""

from __future__ import annotations

import ast
import operator
import re

_MARK = re.compile(r"^[ \t]*//[ \t]*@unroll[ \t]*\n", re.M)
_HEAD = re.compile(r"\s*for\s*\(\s*var\s+(\w+)\s*(?::\s*\w+\s*)?=\s*([^;]+);\s*(\w+)\s*<\s*([^;]+);"
                   r"\s*(\w+)\s*(?:\+\+|\+=\s*1u?)\s*\)\s*\{")
_CONST = re.compile(r"^\s*const\s+(\w+)\s*(?::\s*\w+\s*)?=\s*([^;]+);", re.M)
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.floordiv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _eval(expr: str, consts: dict[str, str], depth: int = 0) -> int:
    """Integer value of a WGSL constant expression (u32/i32 literals, const names, + - * / %)."""
    if depth > 20:
        raise ValueError(f"@unroll: constant {expr!r} does not resolve")
    py = re.sub(r"\b(\d+)[ui]\b", r"\1", expr.strip())

    def node(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in consts:
            return _eval(consts[n.id], consts, depth + 1)
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            return _OPS[type(n.op)](node(n.left), node(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -node(n.operand)
        raise ValueError(f"@unroll: {expr!r} is not a constant expression of literals and consts")

    return node(ast.parse(py, mode="eval").body)


def _block_end(src: str, open_brace: int) -> int:
    """Index of the ``}`` matching the ``{`` at ``open_brace``."""
    depth = 0
    for i in range(open_brace, len(src)):
        if src[i] == "{":
            depth += 1
        elif src[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("@unroll: unbalanced braces")


def unroll(src: str) -> str:
    """``src`` with every ``// @unroll`` loop expanded (see the module docstring)."""
    consts = dict(_CONST.findall(src))
    return _expand(src, consts)


def _expand(src: str, consts: dict[str, str]) -> str:
    out, pos = [], 0
    for m in _MARK.finditer(src):
        if m.start() < pos:
            continue  # inside a loop already expanded
        h = _HEAD.match(src, m.end())
        if not h or not (h.group(1) == h.group(3) == h.group(5)):
            line = src[m.end():src.find("\n", m.end())]
            raise ValueError(f"@unroll must precede `for (var i = A; i < B; i++) {{`, got: {line.strip()!r}")
        var = h.group(1)
        lo, hi = _eval(h.group(2), consts), _eval(h.group(4), consts)
        end = _block_end(src, h.end() - 1)
        body = _expand(src[h.end():end], consts)
        if re.search(r"\b(break|continue)\b", body):
            raise ValueError(f"@unroll: loop over {var!r} has break/continue in its body")
        indent = re.match(r"[ \t]*", src[m.end():]).group(0)
        suffix = re.search(r"\d+([ui]?)\s*$", h.group(2).strip())
        lit = suffix.group(1) if suffix else "u"
        copies = [re.sub(rf"\b{var}\b", f"{k}{lit}", "{" + body + "}") for k in range(lo, hi)]
        out += [src[pos:m.start()], indent, f"\n{indent}".join(copies) or "{}"]
        pos = end + 1
    out.append(src[pos:])
    return "".join(out)
