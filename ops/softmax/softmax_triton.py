"""Triton softmax along the rows of a row-major [M, N] matrix: y = exp(x − max) / Σ exp(x − max).

Pointers are fp32 or bf16 (the factories hand Triton ``.view(torch.bfloat16)`` of the raw words);
the math is fp32, the store rounds to the output type (nearest even). Bytes 2·M·N·itemsize for
the one-read kernels; exp is ``exp2((x − m)·log2 e)``. "No value yet" is −FLT_MAX (never −inf, so
no −inf − (−inf) = NaN); masked lanes load −inf, whose exp2 is 0.

- ``softmax_three_pass``: program = row; BLOCK-wide tiles: a max loop, a Σ exp loop, a write
  loop (three reads of the row).
- ``softmax_fused``: program = row, BLOCK ≥ N: the row is loaded once into registers, reduced
  twice (max, Σ) and written from registers (one read).
- ``softmax_online``: program = row; one loop over BLOCK-wide tiles keeps per-lane running max
  and rescaled running sums, combined once (tl.max, tl.sum), then a write loop (two reads).
- ``softmax_split``: a row in G parts of ≤ BLOCK elements, one program each, the part held in
  registers. PHASE 0 (GPU, one launch): programs take tickets in start order (atomic counter),
  ticket t → row t // G, part t % G; each publishes its part's (max, Σ) as two int64 words
  (epoch << 32 | float bits, atomic exchange), spins on volatile loads until the G words of this
  launch's epoch are there (BACKOFF ns of nanosleep between polls: fewer loads to the slots'
  L2 lines while the SM's other program streams), combines them in part order and writes its
  part (one read). Needs G programs resident at once (the factory keeps G ≤ SM count; tickets
  make a program wait only for siblings that have started or will start next). The interpreter
  runs programs one after another, so a program cannot wait for a later one: there the same
  kernel runs as two launches, PHASE 1 (publish) then PHASE 2 (gather, re-read the part, write).
  AHEAD (session 37, kernels.TRITON_SPLIT_AHEAD): after publishing, the part of ticket t + AHEAD
  is asked into L2 (``_prefetch_part``), so DRAM has work while the program waits.
"""

import triton
import triton.language as tl

from ops.common.triton_ptx import prefetch_l2

LOG2E = tl.constexpr(1.4426950408889634)
NEG = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def _load_row(ptr, offs, mask):
    return tl.load(ptr + offs, mask=mask, other=float("-inf")).to(tl.float32)


@triton.jit
def _out(v, y_ptr):
    """v in y_ptr's element type (``_to``)."""
    return _to(v, y_ptr.dtype.element_ty)


@triton.jit
def _to(v, ty: tl.constexpr):
    """v in type ty, rounded to nearest even: bf16 is rounded here in integer arithmetic
    (Triton's interpreter truncates in its fp32 → bf16 cast), so the cast itself is exact."""
    if ty == tl.bfloat16:
        b = v.to(tl.int32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536  # outputs are finite and ≥ 0: no overflow
        v = b.to(tl.float32, bitcast=True)
    return v.to(ty)


@triton.jit
def softmax_three_pass(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * N
    yr = y_ptr + row * N
    cols = tl.arange(0, BLOCK)
    acc = tl.full((BLOCK,), NEG, tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + cols
        acc = tl.maximum(acc, _load_row(xr, offs, offs < N))
    m = tl.max(acc, axis=0)
    sacc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + cols
        sacc += tl.exp2((_load_row(xr, offs, offs < N) - m) * LOG2E)
    inv = 1.0 / tl.sum(sacc, axis=0)
    for start in range(0, N, BLOCK):
        offs = start + cols
        mask = offs < N
        e = tl.exp2((_load_row(xr, offs, mask) - m) * LOG2E) * inv
        tl.store(yr + offs, _out(e, y_ptr), mask=mask)


@triton.jit
def softmax_fused(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = _load_row(x_ptr + row * N, offs, mask)
    m = tl.max(x, axis=0)
    e = tl.exp2((x - m) * LOG2E)
    inv = 1.0 / tl.sum(e, axis=0)
    tl.store(y_ptr + row * N + offs, _out(e * inv, y_ptr), mask=mask)


@triton.jit
def softmax_online(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * N
    yr = y_ptr + row * N
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), NEG, tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, N, BLOCK):
        offs = start + cols
        x = _load_row(xr, offs, offs < N)
        mn = tl.maximum(m, x)
        s = s * tl.exp2((m - mn) * LOG2E) + tl.exp2((x - mn) * LOG2E)
        m = mn
    mt = tl.max(m, axis=0)
    inv = 1.0 / tl.sum(s * tl.exp2((m - mt) * LOG2E), axis=0)
    for start in range(0, N, BLOCK):
        offs = start + cols
        mask = offs < N
        e = tl.exp2((_load_row(xr, offs, mask) - mt) * LOG2E) * inv
        tl.store(yr + offs, _out(e, y_ptr), mask=mask)


@triton.jit
def _tag(epoch, v):
    return (epoch.to(tl.int64) << 32) | (v.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF)


@triton.jit
def _untag(w):
    return (w & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def _publish(slot_ptr, row, part, x, epoch, G: tl.constexpr):
    """This part's (max, Σ exp) into its two epoch-tagged slot words (x: the part, any shape)."""
    m = tl.max(x)
    s = tl.sum(tl.exp2((x - m) * LOG2E))
    base = slot_ptr + 2 * (row * G)
    tl.atomic_xchg(base + 2 * part, _tag(epoch, m), sem="relaxed")
    tl.atomic_xchg(base + 2 * part + 1, _tag(epoch, s), sem="relaxed")


@triton.jit
def _finish(y_ptr, slot_ptr, x, t, row, offs, mask, N, epoch, G: tl.constexpr, GP: tl.constexpr,
            BACKOFF: tl.constexpr):
    """Wait for the row's partials (``_gather``) and write the part."""
    mt, inv = _gather(slot_ptr, t, row, epoch, G, GP, BACKOFF)
    tl.store(y_ptr + row * N + offs, _out(tl.exp2((x - mt) * LOG2E) * inv, y_ptr), mask=mask)


@triton.jit
def _gather(slot_ptr, t, row, epoch, G: tl.constexpr, GP: tl.constexpr, BACKOFF: tl.constexpr):
    """Wait for the G slot pairs of ``row`` to carry this epoch (BACKOFF ns of nanosleep between
    polls) and combine them in part order: (row max, 1 / row Σ)."""
    base = slot_ptr + 2 * (row * G)
    k = tl.arange(0, GP)
    kmask = k < G
    want = epoch.to(tl.int64)
    done = t < 0  # a scalar tensor (False)
    a = tl.zeros((GP,), tl.int64)
    b = tl.zeros((GP,), tl.int64)
    while not done:  # all 2·G words in one round trip per poll
        a = tl.load(base + 2 * k, mask=kmask, other=0, volatile=True)
        b = tl.load(base + 2 * k + 1, mask=kmask, other=0, volatile=True)
        ready = (((a >> 32) == want) & ((b >> 32) == want)) | (k >= G)
        done = tl.min(ready.to(tl.int32), axis=0) == 1
        if BACKOFF > 0:  # sleep before the next poll (0 ns once done; PTX: no interpreter)
            ns = tl.full((GP,), 0, tl.int32) + tl.where(done, 0, BACKOFF)
            tl.inline_asm_elementwise("nanosleep.u32 $1;\n mov.u32 $0, $1;", "=r,r", [ns], dtype=tl.int32,
                                      is_pure=False, pack=1)
    mk = tl.where(kmask, _untag(a), NEG)
    mt = tl.max(mk, axis=0)
    st = tl.sum(tl.where(kmask, _untag(b) * tl.exp2((mk - mt) * LOG2E), 0.0), axis=0)
    return mt, 1.0 / st


@triton.jit
def _ticket(ticket_ptr, n_blocks, epoch, G: tl.constexpr, PHASE: tl.constexpr, TICKET_SEM: tl.constexpr):
    """(ticket, row, part) of this program: PHASE 0 in start order — the ticket carries no data
    (the partials are epoch-tagged words), so a relaxed add: the default acq_rel puts
    MEMBAR.ALL.GPU and an L1 invalidate (CCTL.IVALL) around it in every program (sm_90 SASS);
    the interpreter's phases in program order."""
    if PHASE == 0:
        t = tl.atomic_add(ticket_ptr, 1, sem=TICKET_SEM) - (epoch - 1).to(tl.int64) * n_blocks
    else:
        t = tl.program_id(0).to(tl.int64)
    return t, t // G, t % G


@triton.jit
def _prefetch_part(x_ptr, t, n_blocks, N, chunk, G: tl.constexpr, LINES: tl.constexpr,
                   PER_LINE: tl.constexpr):
    """The part of ticket t asked into L2 (past the last ticket: the last part again), one 128-byte
    line (PER_LINE values) per element: prefetch.global.L2, nothing returns, nothing waits."""
    t = tl.minimum(t, n_blocks - 1)
    cols = tl.arange(0, LINES) * PER_LINE
    offs = (t % G) * chunk + cols
    live = (cols < chunk) & (offs < N)
    prefetch_l2(x_ptr + t // G * N + tl.where(live, offs, 0))


# epoch and n_blocks are not specialised (an int argument equal to 1 becomes a constant)
@triton.jit(do_not_specialize=["epoch", "n_blocks"])
def softmax_split(x_ptr, y_ptr, slot_ptr, ticket_ptr, N, chunk, n_blocks, epoch,
                  G: tl.constexpr, GP: tl.constexpr, BLOCK: tl.constexpr, PHASE: tl.constexpr,
                  TICKET_SEM: tl.constexpr = "relaxed", BACKOFF: tl.constexpr = 0, AHEAD: tl.constexpr = 0):
    t, row, part = _ticket(ticket_ptr, n_blocks, epoch, G, PHASE, TICKET_SEM)
    cols = tl.arange(0, BLOCK)
    offs = part * chunk + cols
    mask = (cols < chunk) & (offs < N)
    x = _load_row(x_ptr + row * N, offs, mask)
    if PHASE != 2:
        _publish(slot_ptr, row, part, x, epoch, G)
    if PHASE == 0 and AHEAD > 0:  # while the siblings' partials come: a later program's part into L2
        PER_LINE: tl.constexpr = 1024 // x_ptr.dtype.element_ty.primitive_bitwidth
        LINES: tl.constexpr = (BLOCK + PER_LINE - 1) // PER_LINE  # ≥ 1 (a 7-value part: one line)
        _prefetch_part(x_ptr, t + AHEAD, n_blocks, N, chunk, G, LINES, PER_LINE)
    if PHASE != 1:  # PHASE 2 (interpreter) waits for nothing: every part was published
        _finish(y_ptr, slot_ptr, x, t, row, offs, mask, N, epoch, G, GP, BACKOFF * (PHASE == 0))


@triton.jit(do_not_specialize=["epoch", "n_blocks"])
def softmax_split_tma(x_desc, y_desc, slot_ptr, ticket_ptr, n_blocks, epoch, G: tl.constexpr,
                      GP: tl.constexpr, R: tl.constexpr, PHASE: tl.constexpr,
                      TICKET_SEM: tl.constexpr = "relaxed", BACKOFF: tl.constexpr = 0):
    """softmax_split with the part moved by TMA: x and y as [M, N/256, 256] tensor descriptors
    whose box [1, R, 256] is one part (N a multiple of R·256: no masks, the boxes never leave the
    tensor). No per-value addresses: 59 registers at 16384 values on 16 warps and 64 KiB of
    shared memory (sm_90, Triton 3.6), so two programs fit an SM where the pointer form (81
    registers) fits one. PHASE as in softmax_split."""
    t, row, part = _ticket(ticket_ptr, n_blocks, epoch, G, PHASE, TICKET_SEM)
    at = [row.to(tl.int32), (part * R).to(tl.int32), 0]
    x = x_desc.load(at).to(tl.float32)
    if PHASE != 2:
        _publish(slot_ptr, row, part, x, epoch, G)
    if PHASE != 1:
        mt, inv = _gather(slot_ptr, t, row, epoch, G, GP, BACKOFF * (PHASE == 0))
        y_desc.store(at, _to(tl.exp2((x - mt) * LOG2E) * inv, y_desc.dtype))
