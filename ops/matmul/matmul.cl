// matmul.cl — C = A·B (SIMT), row-major A [M, K], B [K, N], C [M, N]; the same ladder as matmul.cu.
// Reads (M·K + K·N)·s and writes M·N·s bytes at the fewest (s = element size); 2·M·N·K flops.
// Storage DT (define): 0 fp32, 1 fp16 (vload_half / vstore_half_rte: core OpenCL C, no
// cl_khr_fp16 needed), 2 bf16 (raw ushort words: as_float(w << 16), stored rounded to nearest
// even). Math is fp32 fma (no -cl-fast-relaxed-math, no mad). Launch: groups = (⌈N/BN⌉, ⌈M/BM⌉)
// work-groups (dimension 0 walks the columns of C, dimension 1 its rows); args A, B, C, M, N, K
// (int; offsets are formed in size_t).
//
//   matmul_naive            work-group 16×16, one work-item per C element (0 → column, 1 → row),
//                           a K loop over global memory
//   matmul_tiled_shared     work-group TILE×TILE, one work-item per C element; TILE×TILE tiles of
//                           A and B staged through __local memory, a barrier pair per K tile
//   matmul_register_blocked work-group NT = (BM/TM)·(BN/TN) (256 at 128×128 with 8×8 per item),
//                           1-D; a BM×BN tile of C per group, BK-deep K tiles: 4-wide vector loads
//                           (scalar, zero-filled, at edges or unaligned rows) into double-buffered
//                           __local tiles with A transposed (As[k][m]), an unrolled outer product
//                           per k from float4 __local reads. One barrier per K tile.
// Thread tile layout as in matmul.cu: (TM/4)×(TN/4) 4×4 blocks spaced BM/(TM/4) rows and
// BN/(TN/4) columns apart; items are grouped 4 rows × 8 columns per 32 (an NVIDIA warp reads 4 +
// 8 distinct float4 of the tiles per k, conflict-free).

#ifndef DT
#define DT 0
#endif
#ifndef TILE
#define TILE 16
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif

// ---- storage type and conversions: storage ↔ fp32 --------------------------------------------

#include "f16.cl"
#include "halfvec.cl"

// p[i..i+3]; i % 4 == 0 and the row 4-aligned (the caller checks)
inline float4 ld4(__global const T* p, size_t i) {
#if DT == 0
    return *(__global const float4*)(p + i);
#elif DT == 1
    return ldh4(p + i);
#else
    const uint2 w = *(__global const uint2*)(p + i);
    return (float4)(bf2f(w.x & 0xffffu), as_float(w.x & 0xffff0000u), bf2f(w.y & 0xffffu),
                    as_float(w.y & 0xffff0000u));
#endif
}

inline void st4(__global T* p, size_t i, float4 v) {
#if DT == 0
    *(__global float4*)(p + i) = v;
#elif DT == 1
    sth4(p + i, v);
#else
    *(__global uint2*)(p + i) = (uint2)((uint)f2bf(v.x) | ((uint)f2bf(v.y) << 16),
                                        (uint)f2bf(v.z) | ((uint)f2bf(v.w) << 16));
#endif
}

// ---- naive ----------------------------------------------------------------------------------

__kernel void matmul_naive(__global const T* restrict A, __global const T* restrict B, __global T* restrict C,
                           int M, int N, int K) {
    const int col = get_global_id(0), row = get_global_id(1);
    if (row >= M || col >= N) return;
    __global const T* a = A + (size_t)row * K;  // row of A
    __global const T* b = B + col;              // column of B, stride N
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fma(ld(a, k), ld(b, (size_t)k * N), acc);
    st(C, (size_t)row * N + col, acc);
}

// ---- tiled_shared ---------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_tiled_shared(__global const T* restrict A, __global const T* restrict B, __global T* restrict C,
                         int M, int N, int K) {
    __local float As[TILE][TILE];  // As[r][k]
    __local float Bs[TILE][TILE];  // Bs[k][c]
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int row = get_group_id(1) * TILE + ty, col = get_group_id(0) * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // one element of each tile per work-item; zero outside A/B
        As[ty][tx] = (row < M && k0 + tx < K) ? ld(A, (size_t)row * K + k0 + tx) : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? ld(B, (size_t)(k0 + ty) * N + col) : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);  // tiles complete before they are read
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[ty][k], Bs[k][tx], acc);
        barrier(CLK_LOCAL_MEM_FENCE);  // reads done before the next tile overwrites them
    }
    if (row < M && col < N) st(C, (size_t)row * N + col, acc);
}

// ---- register_blocked -----------------------------------------------------------------------

#define NT ((BM / TM) * (BN / TN))  // work-items per group
#define TX (BN / TN)                // item columns
#define TY (BM / TM)                // item rows
#define RS (BM / (TM / 4))          // row spacing of an item's 4×4 blocks
#define CS (BN / (TN / 4))          // column spacing
#define A_LOADS (BM * BK / 4 / NT)  // 4-wide loads of A per item per K tile
#define B_LOADS (BK * BN / 4 / NT)

#if TM % 4 || TN % 4 || BK % 4 || TX % 8 || TY % 4 || A_LOADS * NT * 4 != BM * BK || B_LOADS * NT * 4 != BK * BN \
    || A_LOADS < 1 || B_LOADS < 1
#error "register_blocked: unsupported BM/BN/BK/TM/TN"
#endif

// A[r][k .. k+3] (zero outside A): one vector load when in bounds and 4-aligned
inline float4 load_a(__global const T* A, int M, int K, int r, int k, bool vec) {
    if (r < M && vec && k + 3 < K) return ld4(A, (size_t)r * K + k);
    float4 v = (float4)(0.0f);
    if (r < M) {
        const size_t o = (size_t)r * K;
        if (k < K) v.x = ld(A, o + k);
        if (k + 1 < K) v.y = ld(A, o + k + 1);
        if (k + 2 < K) v.z = ld(A, o + k + 2);
        if (k + 3 < K) v.w = ld(A, o + k + 3);
    }
    return v;
}

// B[k][c .. c+3] (zero outside B)
inline float4 load_b(__global const T* B, int N, int K, int k, int c, bool vec) {
    if (k < K && vec && c + 3 < N) return ld4(B, (size_t)k * N + c);
    float4 v = (float4)(0.0f);
    if (k < K) {
        const size_t o = (size_t)k * N;
        if (c < N) v.x = ld(B, o + c);
        if (c + 1 < N) v.y = ld(B, o + c + 1);
        if (c + 2 < N) v.z = ld(B, o + c + 2);
        if (c + 3 < N) v.w = ld(B, o + c + 3);
    }
    return v;
}

__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void matmul_register_blocked(__global const T* restrict A, __global const T* restrict B, __global T* restrict C,
                             int M, int N, int K) {
    __local float4 As[2][BK][BM / 4];  // A tile transposed (As[k][m/4].s(m%4)), two buffers
    __local float4 Bs[2][BK][BN / 4];  // Bs[k][n/4]
    const int tid = get_local_id(0);
    const int warp = tid / 32, lane = tid % 32;
    // item (ty, tx) in the TY×TX grid; each 32 items are a 4×8 patch of it
    const int tx = (warp % (TX / 8)) * 8 + lane % 8;
    const int ty = (warp / (TX / 8)) * 4 + lane / 8;
    const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
    const bool vec_a = (K & 3) == 0, vec_b = (N & 3) == 0;  // 4-aligned rows

    float4 ra[A_LOADS], rb[B_LOADS];  // the next K tile, in flight in registers
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    // load slot l of A: vector idx = tid + l·NT → row idx / (BK/4), k offset (idx % (BK/4))·4;
    // of B: k row idx / (BN/4), column (idx % (BN/4))·4
#define LOAD_TILE(k0)                                                                               \
    {                                                                                               \
        for (int l = 0; l < A_LOADS; ++l) {                                                         \
            const int idx = tid + l * NT;                                                           \
            ra[l] = load_a(A, M, K, m0 + idx / (BK / 4), (k0) + (idx % (BK / 4)) * 4, vec_a);        \
        }                                                                                           \
        for (int l = 0; l < B_LOADS; ++l) {                                                         \
            const int idx = tid + l * NT;                                                           \
            rb[l] = load_b(B, N, K, (k0) + idx / (BN / 4), n0 + (idx % (BN / 4)) * 4, vec_b);        \
        }                                                                                           \
    }
    // A transposed: component m%4 of As[k..k+3][m/4]; B one float4
#define STORE_TILE(buf)                                                                             \
    {                                                                                               \
        for (int l = 0; l < A_LOADS; ++l) {                                                         \
            const int idx = tid + l * NT, m = idx / (BK / 4), k = (idx % (BK / 4)) * 4;              \
            __local float* col = (__local float*)&As[buf][k][0] + m;                                \
            col[0] = ra[l].x;                                                                       \
            col[BM] = ra[l].y;                                                                      \
            col[2 * BM] = ra[l].z;                                                                  \
            col[3 * BM] = ra[l].w;                                                                  \
        }                                                                                           \
        for (int l = 0; l < B_LOADS; ++l) {                                                         \
            const int idx = tid + l * NT;                                                           \
            Bs[buf][idx / (BN / 4)][idx % (BN / 4)] = rb[l];                                        \
        }                                                                                           \
    }

    LOAD_TILE(0)
    STORE_TILE(0)
    barrier(CLK_LOCAL_MEM_FENCE);  // tile 0 visible

    int buf = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;
        if (more) LOAD_TILE(k0 + BK)  // the next tile's global loads overlap this tile's FMAs
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM / 4; ++i) {
                const float4 v = As[buf][kk][(i * RS) / 4 + ty];  // rows i·RS + ty·4 .. +3
                a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN / 4; ++j) {
                const float4 v = Bs[buf][kk][(j * CS) / 4 + tx];  // columns j·CS + tx·4 .. +3
                b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        // the other buffer was last read in the previous iteration, closed by its barrier
        if (more) STORE_TILE(buf ^ 1)
        barrier(CLK_LOCAL_MEM_FENCE);  // next tile visible; this tile's reads done
        buf ^= 1;
    }
#undef LOAD_TILE
#undef STORE_TILE

    // item element (i, j) is C[m0 + (i/4)·RS + ty·4 + i%4][n0 + (j/4)·CS + tx·4 + j%4]
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = m0 + (i / 4) * RS + ty * 4 + i % 4;
        if (r >= M) continue;
        const size_t o = (size_t)r * N;
#pragma unroll
        for (int j4 = 0; j4 < TN / 4; ++j4) {
            const int c = n0 + j4 * CS + tx * 4;
            const float4 v = (float4)(acc[i][4 * j4], acc[i][4 * j4 + 1], acc[i][4 * j4 + 2], acc[i][4 * j4 + 3]);
            if (vec_b && c + 3 < N) {
                st4(C, o + c, v);
            } else {
                if (c < N) st(C, o + c, v.x);
                if (c + 1 < N) st(C, o + c + 1, v.y);
                if (c + 2 < N) st(C, o + c + 2, v.z);
                if (c + 3 < N) st(C, o + c + 3, v.w);
            }
        }
    }
}
