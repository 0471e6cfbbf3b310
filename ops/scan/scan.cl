// scan.cl — inclusive prefix sum y[i] = Σ_{j<=i} x[j] (fp32 or int32). Minimum traffic: read n,
// write n elements (8·n bytes).
//
// Defines: IS_INT (0/1), BLOCK (work-group size, power of two), ITEMS_VEC (16-byte vectors per
// work-item, decoupled_lookback), LOOKBACK (flags read per look-back window), LOOKBACK_KERNEL
// (1: compile scan_decoupled_lookback, which needs cl_khr_int64_base_atomics). Indices 64-bit.
// Buffers are 16-byte aligned (OpenCL base alignment), so 4-element vector accesses are legal
// at multiples of 4 elements.
//
// Reduce-then-scan, three passes per level (kogge_stone, brent_kung); TILE = 4·BLOCK elements,
// work-item t owns the 4 consecutive elements [4t, 4t+4) of its group's tile (one 16-byte load):
//   scan_reduce_tiles        sums[g] = Σ tile g (local-memory tree)                  read n
//   (the sums are scanned in place by the same three passes, recursively; the host drives it)
//   scan_tiles_kogge_stone   serial scan of the 4 elements; Kogge–Stone over the BLOCK work-item
//                            totals in local memory (double buffer, log2 BLOCK steps, a barrier
//                            each); plus carry[g-1], the inclusive scan of the tile sums
//                                                                         read n, write n
//   scan_tiles_brent_kung    same with a Brent–Kung up-sweep / down-sweep (2 log2 BLOCK steps)
//   → 12·n bytes: at most 2/3 of the bandwidth ceiling.
//
// Single pass, scan_decoupled_lookback (Merrill & Garland 2016): TILE = BLOCK·4·ITEMS_VEC.
//   Row j of the tile is BLOCK consecutive 16-byte vectors; work-item t loads vector t of every
//   row (coalesced) and scans it serially. The ITEMS_VEC·BLOCK vector totals, in memory order
//   (row-major), go to local memory and are scanned by raking: work-item t scans the ITEMS_VEC
//   consecutive totals [t·ITEMS_VEC, (t+1)·ITEMS_VEC) serially, a Kogge–Stone over the BLOCK
//   rake totals gives each rake its prefix (local indices padded by one word per 32: the rakes'
//   stride-ITEMS_VEC accesses hit distinct banks). Work-item 0 publishes the tile aggregate
//   (status A) and looks back LOOKBACK flags at a time (independent volatile loads, so one
//   round trip per window), stopping at the first inclusive prefix (P); it spins on an X.
//   A flag is one 64-bit word — epoch (30 bits) | status (2) | value bits (32) — written with
//   atom_xchg and read with volatile loads: value and status travel together.
//   Tiles are claimed with a 64-bit ticket counter (atom_inc) in launch order: a group only
//   waits on tiles claimed before it by groups that are already running, so the spin cannot
//   deadlock on devices that run every started work-group to completion (GPUs, PoCL). The
//   counter is never reset: launch k takes tickets [k·T, (k+1)·T), epoch = ticket / T, flags of
//   the previous launch read as X; nothing is re-zeroed between launches (zeroed at allocation).
//   fp32 results depend on which predecessors were A or P at look-back: not bit-reproducible.
//                                                           read n, write n (+8 bytes per tile)

#ifndef IS_INT
#define IS_INT 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef ITEMS_VEC
#define ITEMS_VEC 8
#endif
#ifndef LOOKBACK
#define LOOKBACK 16
#endif
#ifndef LOOKBACK_KERNEL
#define LOOKBACK_KERNEL 0
#endif

#if IS_INT
typedef int T;
typedef int4 T4;
#define TO_BITS(v) as_uint(v)
#define FROM_BITS(b) as_int(b)
#else
typedef float T;
typedef float4 T4;
#define TO_BITS(v) as_uint(v)
#define FROM_BITS(b) as_float(b)
#endif

#define TILE3 (4 * BLOCK)

// the 4 elements [i, i+4) of x (i a multiple of 4): one 16-byte access when all are in range
T4 load4(__global const T* x, long i, long n) {
    if (i + 4 <= n) return *(__global const T4*)(x + i);
    T4 v = (T4)(0);
    if (i < n) v.x = x[i];
    if (i + 1 < n) v.y = x[i + 1];
    if (i + 2 < n) v.z = x[i + 2];
    return v;
}

void store4(__global T* y, long i, long n, T4 v) {
    if (i + 4 <= n) {
        *(__global T4*)(y + i) = v;
        return;
    }
    if (i < n) y[i] = v.x;
    if (i + 1 < n) y[i + 1] = v.y;
    if (i + 2 < n) y[i + 2] = v.z;
}

T4 scan4(T4 v) {
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    return v;
}

// ---- reduce-then-scan ------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_reduce_tiles(__global const T* restrict x, __global T* restrict sums, long n) {
    __local T s[BLOCK];
    const int lid = get_local_id(0);
    const T4 v = load4(x, (long)get_group_id(0) * TILE3 + 4 * lid, n);
    s[lid] = (v.x + v.y) + (v.z + v.w);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (lid < stride) s[lid] += s[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) sums[get_group_id(0)] = s[0];
}

// y may alias x (the levels above scan their sums in place: every work-item reads its elements
// before any writes them, and tiles are disjoint). carry: inclusive scan of this level's tile
// sums (has_carry = 0 at the top level).
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_tiles_kogge_stone(__global const T* x, __global T* y, __global const T* carry,
                            int has_carry, long n) {
    __local T s[2][BLOCK];  // double buffer: step k reads one half, writes the other
    const int lid = get_local_id(0);
    const long g = get_group_id(0);
    const long i = g * TILE3 + 4 * lid;
    const T4 v = scan4(load4(x, i, n));
    int src = 0;
    s[0][lid] = v.w;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < BLOCK; off <<= 1) {
        T a = s[src][lid];
        if (lid >= off) a += s[src][lid - off];
        s[src ^ 1][lid] = a;
        src ^= 1;
        barrier(CLK_LOCAL_MEM_FENCE);  // the next step reads every work-item's write
    }
    T prefix = lid > 0 ? s[src][lid - 1] : (T)0;
    if (has_carry && g > 0) prefix += carry[g - 1];
    store4(y, i, n, v + prefix);
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_tiles_brent_kung(__global const T* x, __global T* y, __global const T* carry,
                           int has_carry, long n) {
    __local T s[BLOCK];
    const int lid = get_local_id(0);
    const long g = get_group_id(0);
    const long i = g * TILE3 + 4 * lid;
    const T4 v = scan4(load4(x, i, n));
    s[lid] = v.w;
    barrier(CLK_LOCAL_MEM_FENCE);
    // up-sweep: after stride d, s[k·2d - 1] holds the sum of its 2d-element span
    for (int d = 1; d < BLOCK; d <<= 1) {
        const int k = (lid + 1) * 2 * d - 1;
        if (k < BLOCK) s[k] += s[k - d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // down-sweep: each span's total goes into the middle of the span to its right
    for (int d = BLOCK / 4; d > 0; d >>= 1) {
        const int k = (lid + 1) * 2 * d - 1;
        if (k + d < BLOCK) s[k + d] += s[k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T prefix = lid > 0 ? s[lid - 1] : (T)0;
    if (has_carry && g > 0) prefix += carry[g - 1];
    store4(y, i, n, v + prefix);
}

// ---- decoupled look-back ---------------------------------------------------------------------

#if LOOKBACK_KERNEL
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#define TILE1 (BLOCK * 4 * ITEMS_VEC)
#define NTOT (BLOCK * ITEMS_VEC)
#define PAD(i) ((i) + ((i) >> 5))
#define ST_X 0ul
#define ST_A 1ul
#define ST_P 2ul
#define EPOCH_MASK 0x3ffffffful

ulong pack(T v, ulong status, ulong epoch) {
    return ((((epoch & EPOCH_MASK) << 2) | status) << 32) | (ulong)TO_BITS(v);
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void scan_decoupled_lookback(__global const T* restrict x, __global T* restrict y,
                             volatile __global ulong* flags, volatile __global ulong* ticket,
                             long n, long n_tiles) {
    __local T tot[PAD(NTOT)];
    __local T rake[2][BLOCK];
    __local long s_tile;
    __local ulong s_epoch;
    __local T s_excl;
    const int lid = get_local_id(0);

    if (lid == 0) {
        const ulong t = atom_inc(ticket);
        s_tile = (long)(t % (ulong)n_tiles);
        s_epoch = t / (ulong)n_tiles;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const long tile = s_tile;
    const ulong epoch = s_epoch;
    const long t0 = tile * TILE1;
    const bool full = t0 + TILE1 <= n;

    // rows: vector lid of row j is elements t0 + 4·(j·BLOCK + lid) .. +4 (coalesced)
    T4 v[ITEMS_VEC];
    for (int j = 0; j < ITEMS_VEC; ++j) {
        const long i = t0 + 4 * ((long)j * BLOCK + lid);
        v[j] = scan4(full ? *(__global const T4*)(x + i) : load4(x, i, n));
        tot[PAD(j * BLOCK + lid)] = v[j].w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // raking: work-item lid scans totals [lid·ITEMS_VEC, (lid+1)·ITEMS_VEC) in place
    T r = 0;
    for (int k = 0; k < ITEMS_VEC; ++k) {
        r += tot[PAD(lid * ITEMS_VEC + k)];
        tot[PAD(lid * ITEMS_VEC + k)] = r;
    }
    int src = 0;
    rake[0][lid] = r;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < BLOCK; off <<= 1) {  // Kogge–Stone over the rake totals
        T a = rake[src][lid];
        if (lid >= off) a += rake[src][lid - off];
        rake[src ^ 1][lid] = a;
        src ^= 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const T rake_prefix = lid > 0 ? rake[src][lid - 1] : (T)0;
    const T agg = rake[src][BLOCK - 1];
    for (int k = 0; k < ITEMS_VEC; ++k) tot[PAD(lid * ITEMS_VEC + k)] += rake_prefix;
    // tot now holds the inclusive scan of the vector totals of the tile

    if (lid == 0) {
        T excl = 0;
        if (tile == 0) {
            atom_xchg(flags, pack(agg, ST_P, epoch));
        } else {
            atom_xchg(flags + tile, pack(agg, ST_A, epoch));
            const ulong want = epoch & EPOCH_MASK;
            long end = tile;  // the window is [end - LOOKBACK, end), read nearest first
            for (;;) {
                ulong w[LOOKBACK];
                for (int k = 0; k < LOOKBACK; ++k) {  // independent loads: one round trip
                    const long i = end - 1 - k;
                    w[k] = i >= 0 ? flags[i] : pack((T)0, ST_P, epoch);
                }
                int k = 0, found = 0;
                for (; k < LOOKBACK; ++k) {
                    if ((w[k] >> 34) != want || ((w[k] >> 32) & 3ul) == ST_X) break;  // X: spin here
                    excl += FROM_BITS((uint)w[k]);
                    if (((w[k] >> 32) & 3ul) == ST_P) {
                        found = 1;
                        break;
                    }
                }
                if (found) break;
                end -= k;  // resume at the first X (or past the window: all A)
            }
            atom_xchg(flags + tile, pack(excl + agg, ST_P, epoch));
        }
        s_excl = excl;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const T excl = s_excl;
    for (int j = 0; j < ITEMS_VEC; ++j) {
        const int f = j * BLOCK + lid;
        const T prefix = excl + (f > 0 ? tot[PAD(f - 1)] : (T)0);
        const long i = t0 + 4 * ((long)j * BLOCK + lid);
        if (full)
            *(__global T4*)(y + i) = v[j] + prefix;
        else
            store4(y, i, n, v[j] + prefix);
    }
}
#endif
