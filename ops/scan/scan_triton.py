"""Triton inclusive prefix sum y = cumsum(x) (fp32, int32).

Reduce-then-scan (``scan_reduce_tiles`` + ``scan_tiles``, three passes per level):
  1. ``scan_reduce_tiles``: program p writes sums[p] = Σ x[p·BLOCK : (p+1)·BLOCK]   (read n)
  2. the sums (⌈n/BLOCK⌉ of them) are scanned in place by the same scheme, recursively, until
     one program's tile holds them all
  3. ``scan_tiles``: program p writes y = tl.cumsum(tile) + sums[p-1] (inclusive scan of the
     sums, so sums[p-1] is the exclusive prefix of tile p)                  (read n, write n)
  → 12·n bytes for fp32 against the 8·n minimum: at most 2/3 of the bandwidth ceiling.

Single pass, ``scan_decoupled_lookback`` (Merrill & Garland 2016): each program takes a ticket
(atomic counter, so tiles are claimed in launch order and a program only ever waits on tiles that
are already running), scans its tile with ``tl.cumsum``, publishes its aggregate (status A), looks
back over a window of WINDOW predecessors (one vector load): the tiles after the nearest X (not
yet published) are summed at once, up to the nearest inclusive prefix (status P) if there is one,
which ends the look-back; else the next window ends just after that X. Then it publishes its own
P and writes y. The ticket makes the spin safe: a program only waits on tiles claimed before it,
by programs that are already running. (A program-id tile order with the bounded-spin fallback, as
in scan.cu, was tried: its fallback path summed wrong on the H200 and its masked fallback load
slowed every look-back round; see the README.)                                          (read n, write n)
``scan_lookback_l2`` (the registered form since session 28): the same look-back with the tile
streamed instead of held in registers — its sum from SUB-wide loads left in L2 (evict_last), the
look-back, then the tile read again (from L2, evict_first) and scanned SUB values at a time with a
running carry. Few registers, so several programs share an SM and one's look-back overlaps the
others' streams; DRAM still sees one read and one write.        (read n from DRAM + n from L2, write n)
A flag is one 64-bit word, written with one atomic exchange and read with volatile loads:
  bits 63..34: epoch (ticket // n_tiles, mod 2^30), bits 33..32: status (0 X, 1 A, 2 P),
  bits 31..0: the value (fp32 bits or int32).
Every launch takes n_tiles tickets from a 64-bit counter that is never reset, so a launch sees the
previous launch's flags as stale (another epoch) and nothing is re-zeroed between launches.
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


@triton.jit
def _claim(ticket_ptr, n_tiles, PID_ORDER: tl.constexpr):
    """(epoch, tile) of this program. int64 tickets: launch k takes [k·n_tiles, (k+1)·n_tiles).
    Relaxed: the ticket carries no data (flags are epoch-tagged words); acq_rel would fence and
    invalidate L1 in every program. PID_ORDER (probes): tile = program id, so x's load need not
    wait for the ticket's round trip."""
    ticket = tl.atomic_add(ticket_ptr, 1, sem="relaxed")
    epoch = ticket // n_tiles
    if PID_ORDER:
        tile = tl.program_id(0).to(tl.int64)
    else:
        tile = ticket % n_tiles
    return epoch, tile


@triton.jit
def _lookback(x_ptr, flag_ptr, tile, n, epoch, zeros, CHUNK: tl.constexpr, SUB: tl.constexpr,
              WINDOW: tl.constexpr, IS_FLOAT: tl.constexpr, SPIN: tl.constexpr, HIDE: tl.constexpr):
    """The exclusive prefix of ``tile`` (tiles of CHUNK values) from its predecessors' flags;
    ``zeros``: WINDOW zeros of x's type. SPIN > 0: a tile unpublished for SPIN reads is summed
    from x (SUB values at a time)."""
    excl = tl.sum(zeros, axis=0)
    done = tile == 0
    base = tile  # the window is [base - WINDOW, base)
    want = epoch & 0x3FFFFFFF
    spins = 0
    while not done:
        idx = base - WINDOW + tl.arange(0, WINDOW)
        valid = idx >= 0
        w = tl.load(flag_ptr + idx, mask=valid, other=0, volatile=True)
        st = tl.where(((w >> 34) & 0x3FFFFFFF) == want, (w >> 32) & 3, 0)  # stale epoch → X
        if HIDE != 0:  # (tests) these tiles are never seen published
            st = tl.where((idx & HIDE) != 0, 0, st)
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
        prev = base
        base = tl.where(kx > -(1 << 40), kx + 1, base - WINDOW)
        if SPIN > 0:  # bounded wait: the nearest tile, unpublished for SPIN reads, summed from x
            spins = tl.where(done | (base < prev), 0, spins + 1)
            if spins >= SPIN:
                for j in range(0, CHUNK, SUB):
                    xo = (base - 1) * CHUNK + j + tl.arange(0, SUB)
                    excl += tl.sum(tl.load(x_ptr + xo, mask=xo < n, other=0), axis=0)
                base -= 1
                spins = 0
    return excl


@triton.jit
def _publish_and_look_back(x_ptr, flag_ptr, tile, n, epoch, agg, CHUNK: tl.constexpr, SUB: tl.constexpr,
                           WINDOW: tl.constexpr, IS_FLOAT: tl.constexpr, SPIN: tl.constexpr,
                           HIDE: tl.constexpr):
    """Publish the tile's aggregate (tile 0: already its inclusive prefix), look back for its
    exclusive prefix, publish the inclusive one; returns the exclusive prefix."""
    tl.atomic_xchg(flag_ptr + tile, _pack(agg, tl.where(tile == 0, 2, 1).to(tl.int64), epoch, IS_FLOAT),
                   sem="relaxed")
    excl = _lookback(x_ptr, flag_ptr, tile, n, epoch, tl.zeros((WINDOW,), dtype=agg.dtype), CHUNK, SUB,
                     WINDOW, IS_FLOAT, SPIN, HIDE)
    if tile > 0:
        tl.atomic_xchg(flag_ptr + tile, _pack(excl + agg, tl.full((), 2, tl.int64), epoch, IS_FLOAT),
                       sem="relaxed")
    return excl


# n_tiles is not specialised: Triton folds an int argument equal to 1 into a constant, and with
# one tile (n <= BLOCK) the look-back loop folds away; Triton 3.6 then failed to compile the kernel
# ("PassManager::run failed", seen on the H200 for n <= 1025).
@triton.jit(do_not_specialize=["n_tiles"])
def scan_decoupled_lookback(x_ptr, y_ptr, flag_ptr, ticket_ptr, n, n_tiles,
                            BLOCK: tl.constexpr, WINDOW: tl.constexpr, IS_FLOAT: tl.constexpr,
                            PID_ORDER: tl.constexpr = False, SPIN: tl.constexpr = 0,
                            HIDE: tl.constexpr = 0):
    epoch, tile = _claim(ticket_ptr, n_tiles, PID_ORDER)
    offs = tile * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0)
    incl = tl.cumsum(x, axis=0)
    agg = tl.sum(x, axis=0)
    excl = _publish_and_look_back(x_ptr, flag_ptr, tile, n, epoch, agg, BLOCK, BLOCK, WINDOW, IS_FLOAT,
                                  SPIN, HIDE)
    tl.store(y_ptr + offs, incl + excl, mask=mask)


@triton.jit(do_not_specialize=["n_tiles"])
def scan_lookback_l2(x_ptr, y_ptr, flag_ptr, ticket_ptr, n, n_tiles, CHUNK: tl.constexpr,
                     SUB: tl.constexpr, WINDOW: tl.constexpr, IS_FLOAT: tl.constexpr,
                     SPIN: tl.constexpr = 0, HIDE: tl.constexpr = 0):
    """scan_decoupled_lookback with the tile (CHUNK values) streamed instead of held: its aggregate
    from SUB-wide loads (evict_last), the look-back, then the tile read again from L2 (evict_first)
    and scanned SUB values at a time with a running carry. Few registers, so several programs per
    SM: one's look-back overlaps the others' streams; DRAM still sees one read and one write."""
    epoch, tile = _claim(ticket_ptr, n_tiles, False)
    lo = tile * CHUNK
    cols = tl.arange(0, SUB)
    acc = tl.zeros((SUB,), dtype=x_ptr.dtype.element_ty)
    for j in range(0, CHUNK, SUB):
        offs = lo + j + cols
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0, eviction_policy="evict_last")
    carry = _publish_and_look_back(x_ptr, flag_ptr, tile, n, epoch, tl.sum(acc, axis=0), CHUNK, SUB, WINDOW,
                                   IS_FLOAT, SPIN, HIDE)
    for j in range(0, CHUNK, SUB):
        offs = lo + j + cols
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0, eviction_policy="evict_first")
        tl.store(y_ptr + offs, tl.cumsum(x, axis=0) + carry, mask=mask)
        carry += tl.sum(x, axis=0)


@triton.jit(do_not_specialize=["n_tiles"])
def scan_lookback_tma(x_desc, y_desc, flag_ptr, ticket_ptr, n, n_tiles, R: tl.constexpr,
                      WINDOW: tl.constexpr, IS_FLOAT: tl.constexpr):
    """scan_decoupled_lookback with the tile moved by TMA (probe form): x and y as [n/256, 256]
    tensor descriptors, one tile = one [R, 256] box (n a multiple of 256), scanned as rows (a
    cumsum along each 256-value row plus the exclusive scan of the row totals). No per-value
    addresses, so fewer registers for the same tile: more programs per SM. Ticket order,
    unbounded waits (no fallback: SPIN 0)."""
    epoch, tile = _claim(ticket_ptr, n_tiles, False)
    at = [(tile * R).to(tl.int32), 0]
    x = x_desc.load(at)
    rows = tl.sum(x, axis=1)
    excl = _publish_and_look_back(x_desc, flag_ptr, tile, n, epoch, tl.sum(rows, axis=0), R * 256, R * 256,
                                  WINDOW, IS_FLOAT, 0, 0)
    before = tl.cumsum(rows, axis=0) - rows + excl  # each row's exclusive prefix
    y_desc.store(at, tl.cumsum(x, axis=1) + before[:, None])
