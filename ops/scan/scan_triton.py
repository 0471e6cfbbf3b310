"""Triton inclusive prefix sum y = cumsum(x) (fp32, int32).

Reduce-then-scan (``scan_reduce_tiles`` + ``scan_tiles``, three passes per level):
  1. ``scan_reduce_tiles``: program p writes sums[p] = Σ x[p·BLOCK : (p+1)·BLOCK]   (read n)
  2. the sums (⌈n/BLOCK⌉ of them) are scanned in place by the same scheme, recursively, until
     one program's tile holds them all
  3. ``scan_tiles``: program p writes y = tl.cumsum(tile) + sums[p-1] (inclusive scan of the
     sums, so sums[p-1] is the exclusive prefix of tile p)                  (read n, write n)
  → 12·n bytes for fp32 against the 8·n minimum: at most 2/3 of the bandwidth ceiling.

Single pass, ``scan_decoupled_lookback`` (Merrill & Garland 2016, with the bounded spin of
Smith, Levien & Owens' "decoupled fallback", 2025): program p scans tile p with ``tl.cumsum``,
publishes its aggregate (status A) and looks back over a window of WINDOW predecessors (one vector
load): the tiles after the nearest X (not yet published) are summed at once, up to the nearest
inclusive prefix (status P) if there is one, which ends the look-back; else the next window ends
just after that X. After SPIN_LIMIT reads that find the nearest tile still X, the program sums
that tile's input itself and goes on past it, so it never waits on another program being
scheduled (no deadlock whatever the launch order). Then it publishes its own P and writes y.
                                                                            (read n, write n)
A flag is one 64-bit word, written with one atomic exchange and read with volatile loads:
  bits 63..34: epoch (mod 2^30), bits 33..32: status (0 X, 1 A, 2 P), bits 31..0: the value
  (fp32 bits or int32).
The host passes a new epoch to every launch, so a launch sees the previous launch's flags as X
and nothing is re-zeroed between launches.
fp32 results depend on which predecessors were A or P at look-back time: not bit-reproducible.
"""

import triton
import triton.language as tl


@triton.jit
def scan_reduce_tiles(x_ptr, sums_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(sums_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def scan_tiles(x_ptr, y_ptr, carry_ptr, n, BLOCK: tl.constexpr, HAS_CARRY: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.cumsum(tl.load(x_ptr + offs, mask=mask, other=0), axis=0)
    if HAS_CARRY:  # inclusive scan of the tile sums: carry_ptr[pid - 1] is tile pid's prefix
        y += tl.load(carry_ptr + pid - 1, mask=pid > 0, other=0)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def _pack(value, status, epoch, IS_FLOAT: tl.constexpr):
    if IS_FLOAT:
        bits = value.to(tl.int32, bitcast=True)
    else:
        bits = value
    tag = ((epoch & 0x3FFFFFFF) << 2) | status
    return (tag << 32) | (bits.to(tl.int64) & 0xFFFFFFFF)


# epoch changes every launch: not specialised (Triton keys int arguments on == 1 and % 16, which
# would recompile); n_tiles neither: with one tile (n <= BLOCK) Triton folded n_tiles == 1 and the
# look-back loop away, and Triton 3.6 then failed to compile ("PassManager::run failed", H200).
@triton.jit(do_not_specialize=["n_tiles", "epoch"])
def scan_decoupled_lookback(x_ptr, y_ptr, flag_ptr, n, n_tiles, epoch,
                            BLOCK: tl.constexpr, WINDOW: tl.constexpr, SPIN_LIMIT: tl.constexpr,
                            IS_FLOAT: tl.constexpr):
    tile = tl.program_id(0).to(tl.int64)
    epoch = epoch.to(tl.int64)  # an i32 argument: the flag packs it into bits 63..34
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    incl = tl.cumsum(x, axis=0)
    agg = tl.sum(x, axis=0)
    # publish the aggregate (tile 0: its aggregate is already the inclusive prefix)
    tl.atomic_xchg(flag_ptr + tile, _pack(agg, tl.where(tile == 0, 2, 1).to(tl.int64), epoch, IS_FLOAT),
                   sem="relaxed")
    excl = tl.sum(tl.zeros((WINDOW,), dtype=x.dtype), axis=0)
    done = tile == 0
    base = tile  # the window is [base - WINDOW, base)
    want = epoch & 0x3FFFFFFF
    spins = tl.full((), 0, tl.int32)
    while not done:
        idx = base - WINDOW + tl.arange(0, WINDOW)
        valid = idx >= 0
        w = tl.load(flag_ptr + idx, mask=valid, other=0, volatile=True)
        st = tl.where(((w >> 34) & 0x3FFFFFFF) == want, (w >> 32) & 3, 0)  # another epoch → X
        st = tl.where(valid, st, 2)  # before tile 0: an inclusive prefix of 0
        lo = (w & 0xFFFFFFFF).to(tl.int32)
        if IS_FLOAT:
            val = lo.to(tl.float32, bitcast=True)
        else:
            val = lo
        val = tl.where(valid, val, 0)
        # the tiles after the nearest X are A or P: consume them, stopping at the nearest P;
        # if there is no P among them, the next window ends just after that X
        kx = tl.max(tl.where(st == 0, idx, -(1 << 40)), axis=0)  # nearest X, if any
        kp = tl.max(tl.where(st == 2, idx, -(1 << 40)), axis=0)  # nearest P, if any
        excl += tl.sum(tl.where(idx >= tl.maximum(kx + 1, kp), val, 0), axis=0)
        done = kp > kx
        spins = tl.where(kx == base - 1, spins + 1, 0)  # the nearest tile is still X
        base = tl.where(kx > -(1 << 40), kx + 1, base - WINDOW)
        # stop waiting: sum tile base - 1 ourselves (a masked-off load when not falling back;
        # written without an `if`: the same logic under `if` gave wrong sums on the H200)
        fall = (spins >= SPIN_LIMIT) & (kp <= kx)
        fb = (base - 1) * BLOCK + tl.arange(0, BLOCK)
        lim = tl.where(fall, n, 0)  # (a scalar-and-vector mask fails in Triton's interpreter)
        excl += tl.sum(tl.load(x_ptr + fb, mask=(fb >= 0) & (fb < lim), other=0), axis=0)
        base = tl.where(fall, base - 1, base)
        spins = tl.where(fall, 0, spins)
    if tile > 0:
        tl.atomic_xchg(flag_ptr + tile, _pack(excl + agg, tl.full((), 2, tl.int64), epoch, IS_FLOAT),
                       sem="relaxed")
    tl.store(y_ptr + offs, incl + excl, mask=mask)
