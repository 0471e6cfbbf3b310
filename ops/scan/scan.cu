// scan.cu — inclusive prefix sum y[i] = Σ_{j<=i} x[j] (fp32 or int32). Minimum traffic:
// read n, write n elements (8·n bytes for 32-bit types).
//
// Defines: IS_INT (0/1), BLOCK (threads per block), ITEMS_VEC (16-byte vectors per thread),
// LOOKBACK (flags per look-back window) and SPIN_LIMIT: the last three decoupled_lookback only.
// Counts are 64-bit: n·4 may exceed 2^31.
//
// Reduce-then-scan, three passes per level (kogge_stone, brent_kung); TILE = 4·BLOCK elements,
// thread t owns the 4 consecutive elements [4t, 4t+4) of its block's tile (one 16-byte load):
//   scan_reduce_tiles        sums[b] = Σ tile b (warp shuffles + shared memory)    read n
//   (the sums are scanned in place by the same three passes, recursively, until one tile
//    holds them; the host drives the levels)
//   scan_tiles_kogge_stone   each thread scans its 4 elements serially; the BLOCK thread totals
//                            are scanned by Kogge–Stone in shared memory (log2 BLOCK steps of
//                            read / barrier / add / barrier: n log n work, log n depth); adds the
//                            inclusive scan of the tile sums of the level above (carry[b-1])
//                            read n, write n
//   scan_tiles_brent_kung    same, with a Brent–Kung up-sweep / down-sweep tree (2n work,
//                            2 log n depth)
//   → 12·n bytes for 32-bit types: at most 2/3 of the bandwidth ceiling.
//
// Single pass, scan_decoupled_lookback (Merrill & Garland, "Single-pass Parallel Prefix Scan
// with Decoupled Look-back", 2016), with the bounded spin of "decoupled fallback" (Smith, Levien
// & Owens, 2025) so that no block ever depends on another block being scheduled. The same
// algorithm as scan.cl's:
//   Block b scans tile b, TILE = BLOCK·4·ITEMS_VEC. Row j of the tile is BLOCK consecutive
//   16-byte vectors; thread t loads vector t of every row (coalesced) and scans it serially. The
//   ITEMS_VEC·BLOCK vector totals, in memory order, go to shared memory and are scanned by
//   raking: thread t scans the ITEMS_VEC consecutive totals [t·ITEMS_VEC, (t+1)·ITEMS_VEC)
//   serially, and a Kogge–Stone over the BLOCK rake totals gives each rake its prefix (indices
//   padded by one word per 32: the stride-ITEMS_VEC rakes hit distinct banks).
//   Thread 0 publishes the tile aggregate (status A); warp 0 looks back LOOKBACK flags at a time
//   (independent volatile loads: one round trip per window; every lane reads the same words, so
//   the branches stay uniform), consuming them nearest first and stopping at the first inclusive
//   prefix (P); at an X it re-reads the window from there. Then thread 0 publishes its own P.
//   Fallback: after SPIN_LIMIT reads that find the nearest tile still X, warp 0 stops waiting,
//   sums that tile's input itself (a 4·TILE-byte read) and goes on past it. Every round of the
//   look-back either moves `end` back or counts a spin, and `end` < 1 ends it (tiles before 0
//   read as P of 0), so a block finishes whatever the scheduler does: no deadlock even if blocks
//   ran out of index order, which CUDA does not promise (CUB's scan assumes it).
//   A flag is one 64-bit word — epoch (30 bits) | status (2) | value bits (32) — written with
//   atomicExch and read with volatile loads: value and status travel together, no fence needed.
//   The host passes a new epoch to every launch; flags of another epoch (the previous launch's)
//   read as X, so nothing is re-zeroed between launches (the flags are zeroed at allocation).
//   Measured on the H200 (results/nvidia-h200/scan-probes/, rounds 1-5): a first version with
//   per-warp chunks, warp-shuffle scans and a 32-lane ballot look-back reached at most 76 % of
//   the ceiling (its 'NO look-back' form 94 %) while scan.cl's structure reached 91 % through
//   OpenCL on the same GPU; this kernel follows scan.cl.
//   fp32 results depend on which predecessors were A or P at look-back: not bit-reproducible.
//   read n, write n (+ 8 bytes of flag per tile)

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
#define LOOKBACK 8  // flags read per look-back window
#endif
#ifndef SPIN_LIMIT
#define SPIN_LIMIT 256  // reads of an X before the block sums that tile's input itself (>= 1)
#endif
// Probe only (scripts/scan_probe.py), never in a registered variant: PROBE_NO_LOOKBACK = 1 skips
// the look-back (every tile's prefix is its own: WRONG output) to time the memory path alone.
#ifndef PROBE_NO_LOOKBACK
#define PROBE_NO_LOOKBACK 0
#endif

#if IS_INT
typedef int T;
typedef int4 T4;
#define TO_BITS(v) ((unsigned int)(v))
#define FROM_BITS(b) ((int)(b))
#else
typedef float T;
typedef float4 T4;
#define TO_BITS(v) __float_as_uint(v)
#define FROM_BITS(b) __uint_as_float(b)
#endif

#define TILE3 (4 * BLOCK)  // elements per tile of the three-pass scans
#define NWARPS (BLOCK / 32)

__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// the 4 elements [i, i+4) of x: a 16-byte load when all are in range (x 16-byte aligned)
__device__ __forceinline__ T4 load4(const T* __restrict__ x, long long i, long long n) {
    if (i + 4 <= n) return *reinterpret_cast<const T4*>(x + i);
    T4 v;
    v.x = i < n ? x[i] : (T)0;
    v.y = i + 1 < n ? x[i + 1] : (T)0;
    v.z = i + 2 < n ? x[i + 2] : (T)0;
    v.w = i + 3 < n ? x[i + 3] : (T)0;
    return v;
}

__device__ __forceinline__ void store4(T* __restrict__ y, long long i, long long n, T4 v) {
    if (i + 4 <= n) {
        *reinterpret_cast<T4*>(y + i) = v;
        return;
    }
    if (i < n) y[i] = v.x;
    if (i + 1 < n) y[i + 1] = v.y;
    if (i + 2 < n) y[i + 2] = v.z;
}

__device__ __forceinline__ T4 scan4(T4 v) {  // serial inclusive scan of one vector
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    return v;
}

__device__ __forceinline__ T4 add4(T4 v, T c) {
    v.x += c; v.y += c; v.z += c; v.w += c;
    return v;
}

// ---- reduce-then-scan ------------------------------------------------------------------------

extern "C" __global__ void __launch_bounds__(BLOCK) scan_reduce_tiles(const T* __restrict__ x,
                                                                        T* __restrict__ sums, long long n) {
    __shared__ T s[NWARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const T4 v = load4(x, (long long)blockIdx.x * TILE3 + 4 * threadIdx.x, n);
    T t = warp_sum((v.x + v.y) + (v.z + v.w));
    if (lane == 0) s[warp] = t;
    __syncthreads();
    if (warp == 0) {
        t = warp_sum(lane < NWARPS ? s[lane] : (T)0);
        if (lane == 0) sums[blockIdx.x] = t;
    }
}

// y may alias x (the levels above scan their sums in place: a block reads its whole tile into
// registers before it writes). carry: inclusive scan of this level's tile sums (has_carry = 0 at
// the top level).
extern "C" __global__ void __launch_bounds__(BLOCK) scan_tiles_kogge_stone(const T* x, T* y, const T* carry,
                                                                             int has_carry, long long n) {
    __shared__ T s[2][BLOCK];  // double buffer: step k reads one half, writes the other
    const int tid = threadIdx.x;
    const long long i = (long long)blockIdx.x * TILE3 + 4 * tid;
    T4 v = scan4(load4(x, i, n));
    int src = 0;
    s[0][tid] = v.w;
    __syncthreads();
#pragma unroll
    for (int off = 1; off < BLOCK; off <<= 1) {
        T a = s[src][tid];
        if (tid >= off) a += s[src][tid - off];
        s[src ^ 1][tid] = a;
        src ^= 1;
        __syncthreads();  // the next step reads what every thread wrote in this one
    }
    T prefix = tid > 0 ? s[src][tid - 1] : (T)0;  // exclusive prefix of thread tid in the tile
    if (has_carry && blockIdx.x > 0) prefix += carry[blockIdx.x - 1];
    store4(y, i, n, add4(v, prefix));
}

extern "C" __global__ void __launch_bounds__(BLOCK) scan_tiles_brent_kung(const T* x, T* y, const T* carry,
                                                                            int has_carry, long long n) {
    __shared__ T s[BLOCK];
    const int tid = threadIdx.x;
    const long long i = (long long)blockIdx.x * TILE3 + 4 * tid;
    T4 v = scan4(load4(x, i, n));
    s[tid] = v.w;
    __syncthreads();
    // up-sweep: after the step of stride d, s[k·2d - 1] holds the sum of its 2d-element span
#pragma unroll
    for (int d = 1; d < BLOCK; d <<= 1) {
        const int k = (tid + 1) * 2 * d - 1;
        if (k < BLOCK) s[k] += s[k - d];
        __syncthreads();
    }
    // down-sweep: push each span's total into the middle of the next span on its right
#pragma unroll
    for (int d = BLOCK / 4; d > 0; d >>= 1) {
        const int k = (tid + 1) * 2 * d - 1;
        if (k + d < BLOCK) s[k + d] += s[k];
        __syncthreads();
    }
    T prefix = tid > 0 ? s[tid - 1] : (T)0;
    if (has_carry && blockIdx.x > 0) prefix += carry[blockIdx.x - 1];
    store4(y, i, n, add4(v, prefix));
}

// ---- decoupled look-back ---------------------------------------------------------------------

#define TILE1 (BLOCK * 4 * ITEMS_VEC)  // elements per tile
#define NTOT (BLOCK * ITEMS_VEC)       // vectors per tile
#define PAD(i) ((i) + ((i) >> 5))      // one word of padding per 32: stride-ITEMS_VEC rakes miss bank conflicts
#define ST_X 0ull
#define ST_A 1ull
#define ST_P 2ull

__device__ __forceinline__ unsigned long long pack(T v, unsigned long long status, unsigned long long epoch) {
    return (((epoch & 0x3fffffffull) << 2 | status) << 32) | TO_BITS(v);
}

// Σ of tile k's input, by one warp (the fallback when tile k's flag stays X)
__device__ __forceinline__ T warp_tile_sum(const T* __restrict__ x, long long k, long long n, int lane) {
    T acc = 0;
    for (int i = 4 * lane; i < TILE1; i += 128) {
        const T4 v = load4(x, k * TILE1 + i, n);
        acc += (v.x + v.y) + (v.z + v.w);
    }
    return warp_sum(acc);
}

extern "C" __global__ void __launch_bounds__(BLOCK) scan_decoupled_lookback(
    const T* __restrict__ x, T* __restrict__ y, unsigned long long* flags, long long n,
    unsigned long long epoch) {
    __shared__ T tot[PAD(NTOT)];
    __shared__ T rake[2][BLOCK];
    __shared__ T s_excl;
    const int tid = threadIdx.x;
    const long long tile = blockIdx.x;
    const long long t0 = tile * TILE1;
    const bool full = t0 + TILE1 <= n;

    // rows: vector tid of row j holds elements t0 + 4·(j·BLOCK + tid) .. +4 (coalesced)
    T4 v[ITEMS_VEC];
#pragma unroll
    for (int j = 0; j < ITEMS_VEC; ++j) {
        const long long i = t0 + 4 * ((long long)j * BLOCK + tid);
        v[j] = full ? *reinterpret_cast<const T4*>(x + i) : load4(x, i, n);
    }
#pragma unroll
    for (int j = 0; j < ITEMS_VEC; ++j) {
        v[j] = scan4(v[j]);
        tot[PAD(j * BLOCK + tid)] = v[j].w;
    }
    __syncthreads();
    // raking: thread tid scans the vector totals [tid·ITEMS_VEC, (tid+1)·ITEMS_VEC) in place
    T r = 0;
#pragma unroll
    for (int k = 0; k < ITEMS_VEC; ++k) {
        r += tot[PAD(tid * ITEMS_VEC + k)];
        tot[PAD(tid * ITEMS_VEC + k)] = r;
    }
    int src = 0;
    rake[0][tid] = r;
    __syncthreads();
#pragma unroll
    for (int off = 1; off < BLOCK; off <<= 1) {  // Kogge–Stone over the rake totals
        T a = rake[src][tid];
        if (tid >= off) a += rake[src][tid - off];
        rake[src ^ 1][tid] = a;
        src ^= 1;
        __syncthreads();
    }
    const T rake_prefix = tid > 0 ? rake[src][tid - 1] : (T)0;
    const T agg = rake[src][BLOCK - 1];
#pragma unroll
    for (int k = 0; k < ITEMS_VEC; ++k) tot[PAD(tid * ITEMS_VEC + k)] += rake_prefix;
    // tot now holds the inclusive scan of the tile's vector totals

    if (tid < 32) {  // warp 0: every lane runs the same look-back (same addresses: broadcast loads)
        T excl = 0;
        if (tile == 0) {
            if (tid == 0) atomicExch(flags, pack(agg, ST_P, epoch));
        } else {
            if (tid == 0) atomicExch(flags + tile, pack(agg, ST_A, epoch));
            const unsigned long long want = epoch & 0x3fffffffull;
            long long end = tile;  // the window is [end - LOOKBACK, end), read nearest first
            int spins = 0;
            while (!PROBE_NO_LOOKBACK) {
                unsigned long long w[LOOKBACK];
#pragma unroll
                for (int k = 0; k < LOOKBACK; ++k) {  // independent loads: one round trip
                    const long long i = end - 1 - k;
                    w[k] = i >= 0 ? *reinterpret_cast<volatile unsigned long long*>(flags + i)
                                  : pack((T)0, ST_P, epoch);  // before tile 0: P of 0
                }
                int k = 0;
                bool found = false;
#pragma unroll
                for (; k < LOOKBACK; ++k) {
                    if ((w[k] >> 34) != want || ((w[k] >> 32) & 3ull) == ST_X) break;  // X: wait here
                    excl += FROM_BITS((unsigned int)w[k]);
                    if (((w[k] >> 32) & 3ull) == ST_P) {
                        found = true;
                        break;
                    }
                }
                if (found) break;
                end -= k;  // resume at the first X (or past the window: all A)
                if (k > 0) {
                    spins = 0;  // progress
                } else if (++spins >= SPIN_LIMIT) {  // tile end - 1 stays X: sum its input ourselves
                    excl += warp_tile_sum(x, end - 1, n, tid);
                    end -= 1;
                    spins = 0;
                }
            }
            if (tid == 0) atomicExch(flags + tile, pack(excl + agg, ST_P, epoch));
        }
        if (tid == 0) s_excl = excl;
    }
    __syncthreads();
    const T excl = s_excl;
#pragma unroll
    for (int j = 0; j < ITEMS_VEC; ++j) {
        const int f = j * BLOCK + tid;
        const T prefix = excl + (f > 0 ? tot[PAD(f - 1)] : (T)0);
        const long long i = t0 + 4 * ((long long)j * BLOCK + tid);
        if (full)
            *reinterpret_cast<T4*>(y + i) = add4(v[j], prefix);
        else
            store4(y, i, n, add4(v[j], prefix));
    }
}
