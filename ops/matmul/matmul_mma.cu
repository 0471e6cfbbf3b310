// matmul_mma.cu — C = A·B on tensor cores with mma.sync (sm_80+), fp16 or bf16 operands, fp32
// accumulation, row-major A [M, K], B [K, N], C [M, N] in the operand type (raw 16-bit words).
// Reads (M·K + K·N)·2 and writes M·N·2 bytes at the fewest; 2·M·N·K flops.
//
// Block tile BM×BN = 128×BN, BN = 256 or 128, BK = 32 or 64 (defines); 2·BN/64 warps in a 2 (M) ×
// BN/64 (N) grid (256 threads at BN 256, 128 at BN 128), each warp a 64×64 tile of C = 4×8
// mma.m16n8k16 tiles (128 fp32 accumulators per thread). MINB: blocks per SM asked of the
// register allocator (__launch_bounds__; 2 at BN 128 keeps two 4-warp blocks resident). Launch:
// groups = ⌈M/128⌉·⌈N/BN⌉ (1-D; blocks visit C tiles in groups of GROUP_M tile-rows so that
// neighbouring blocks share B panels in L2), block = THREADS, dynamic shared memory
// STAGES·(128·BK + BK·BN)·2 bytes (BN 256: BK 64 × 3 stages 144 KiB, BK 32 × 4 96 KiB; above
// 48 KiB, opted in by the launcher).
// Requires K % 8 == 0 and N % 8 == 0 (16-byte rows for cp.async; the factory pads other shapes).
//
// Pipeline: STAGES-deep ring of shared-memory tiles filled by cp.async (16 bytes per copy,
// zero-filled past M, N and K; EVEN, where the tiles divide M, N and K: no bounds, addresses
// advanced by a tile per copy), one __syncthreads per K tile. Fragments come from ldmatrix (A)
// and ldmatrix.trans (B, stored k-major) out of XOR-swizzled tiles (no bank conflicts):
//   A tile [128][4 chunks of 8]: chunk c of row r lives at chunk c ^ ((r >> 1) & 3) (BK 32);
//   A tile [128][8 chunks of 8]: chunk c of row r lives at chunk c ^ (r & 7) (BK 64)
//   B tile [BK][BN/8 chunks of 8]: chunk c of row k lives at chunk c ^ (k & 7)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef BF16
#define BF16 1
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif

#ifndef BK
#define BK 64  // 32 or 64
#endif
#ifndef BN
#define BN 256  // 256 or 128
#endif
#ifndef MINB
#define MINB 1
#endif
#ifndef PIPE
#define PIPE 0  // 1: fragments double-buffered across k16 steps and tiles, all STAGES tiles in flight
#endif
#ifndef EVEN
#define EVEN 0  // 1: M % 128 == 0, N % BN == 0, K % BK == 0 (no bounds in the copies)
#endif
#define BM 128
#define A_CHUNKS (BK / 8)  // 16-byte chunks per A row
#define B_CHUNKS (BN / 8)  // 16-byte chunks per B row
#define WARPS_N (BN / 64)
#define THREADS (64 * WARPS_N)  // 2 × WARPS_N warps
#define A_TILE (BM * BK)  // elements per stage
#define B_TILE (BK * BN)

typedef unsigned short u16;

#define MMA_BF16 BF16
#include "mma_sm80.cuh"

// element offsets of the swizzled tiles (chunk = 8 elements = 16 bytes)
#if BK == 64
__device__ __forceinline__ int a_off(int row, int chunk) { return row * BK + ((chunk ^ (row & 7)) << 3); }
#else
__device__ __forceinline__ int a_off(int row, int chunk) { return row * BK + ((chunk ^ ((row >> 1) & 3)) << 3); }
#endif
__device__ __forceinline__ int b_off(int k, int chunk) { return k * BN + ((chunk ^ (k & 7)) << 3); }

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
matmul_mma_sync(const u16* __restrict__ A, const u16* __restrict__ B, u16* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(128) u16 smem[];
    u16* As = smem;                    // STAGES × [BM][BK]
    u16* Bs = smem + STAGES * A_TILE;  // STAGES × [BK][BN]

    // grouped tile order: GROUP_M tile-rows per group, walked column by column
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (blockIdx.x / in_group) * GROUP_M;
    const int size_m = min(tiles_m - first_m, GROUP_M);
    const int bm = first_m + (blockIdx.x % in_group) % size_m;
    const int bn = (blockIdx.x % in_group) / size_m;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // the warp's 64×64 tile in the block tile (unsigned: shifts, as for the power-of-two BN)
    const int wm = (int)((unsigned)warp / WARPS_N) * 64, wn = (int)((unsigned)warp % WARPS_N) * 64;
    const int row0 = bm * BM, col0 = bn * BN;

    // copies of the K tiles, in order (prologue tiles 0 .. STAGES-2, then one per iteration):
    // thread tid copies A chunks (r, c) = (tid / A_CHUNKS + i·A_ROWS, tid % A_CHUNKS) and B chunks
    // (k, c) = (tid / B_CHUNKS + i·B_ROWS, tid % B_CHUNKS); the swizzle is the same for every i
    // (A_ROWS is a multiple of 16 and B_ROWS of 8), so each copy is a fixed offset from the
    // first. EVEN: the global addresses advance by a tile per copy, no bounds (the loop's
    // address arithmetic is a few adds instead of ~100 instructions of index, bounds and select)
#define A_ROWS (THREADS / A_CHUNKS)
#define B_ROWS (THREADS / B_CHUNKS)
    const int ar = tid / A_CHUNKS, ac = tid % A_CHUNKS, br = (unsigned)tid / B_CHUNKS, bc = (unsigned)tid % B_CHUNKS;
    const unsigned a_dst = a_off(ar, ac) * 2, b_dst = b_off(br, bc) * 2;
#if EVEN
    const u16* a_src = A + (size_t)(row0 + ar) * K + ac * 8;
    const u16* b_src = B + (size_t)br * N + col0 + bc * 8;
    const size_t b_step = (size_t)BK * N;
#endif
    auto load_tile = [&](int kt, int s) {
        const unsigned a_s = smem_u32(As + s * A_TILE) + a_dst, b_s = smem_u32(Bs + s * B_TILE) + b_dst;
#if EVEN
#pragma unroll
        for (int i = 0; i < A_TILE / 8 / THREADS; ++i) cp_async16(a_s + i * A_ROWS * BK * 2, a_src + (size_t)i * A_ROWS * K, 16);
#pragma unroll
        for (int i = 0; i < B_TILE / 8 / THREADS; ++i) cp_async16(b_s + i * B_ROWS * BN * 2, b_src + (size_t)i * B_ROWS * N, 16);
        a_src += BK;
        b_src += b_step;
#else
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < A_TILE / 8 / THREADS; ++i) {
            const int gr = row0 + ar + i * A_ROWS, gk = k0 + ac * 8;
            const bool ok = gr < M && gk < K;
            cp_async16(a_s + i * A_ROWS * BK * 2, A + (ok ? (size_t)gr * K + gk : 0), ok ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < B_TILE / 8 / THREADS; ++i) {
            const int gk = k0 + br + i * B_ROWS, gc = col0 + bc * 8;
            const bool ok = gk < K && gc < N;
            cp_async16(b_s + i * B_ROWS * BN * 2, B + (ok ? (size_t)gk * N + gc : 0), ok ? 16 : 0);
        }
#endif
    };

    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    const int k_tiles = (K + BK - 1) / BK;
    // fragments of k16 step kk of the stage at (a_s, b_s)
    auto load_frags = [&](unsigned a_s, unsigned b_s, int kk, unsigned (&af)[4][4], unsigned (&bf)[8][2]) {
#pragma unroll
        for (int i = 0; i < 4; ++i)  // A m16×k16: lanes 0-15 rows 0-15 at k 0-7, lanes 16-31 at k 8-15
            ldmatrix_x4(af[i], a_s + a_off(wm + i * 16 + (lane & 15), kk * 2 + (lane >> 4)) * 2);
#pragma unroll
        for (int p = 0; p < 4; ++p) {  // B k16×n16 (two n8 tiles): matrices (k0-7|k8-15) × (n0-7|n8-15)
            unsigned r[4];
            const int k = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
            ldmatrix_x4_trans(r, b_s + b_off(k, (wn + p * 16) / 8 + (lane >> 4)) * 2);
            bf[2 * p][0] = r[0]; bf[2 * p][1] = r[1];
            bf[2 * p + 1][0] = r[2]; bf[2 * p + 1][1] = r[3];
        }
    };
    auto stage_a = [&](int s) { return smem_u32(As + s * A_TILE); };
    auto stage_b = [&](int s) { return smem_u32(Bs + s * B_TILE); };
#if PIPE
    // All STAGES tiles in flight from the start. The fragments of k16 step kk+1 are loaded while
    // the MMAs of step kk run (two register buffers); at a tile's last step the barrier comes
    // first (tile kt+1 has landed, and no warp reads stage kt any more: its last fragments are
    // in registers), then stage kt is refilled with tile kt+STAGES and the first fragments of
    // tile kt+1 are loaded, so the barrier and those loads overlap the last MMAs of tile kt.
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        if (s < k_tiles) load_tile(s, s);
        cp_async_commit();
    }
    unsigned af[2][4][4], bf[2][8][2];
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    load_frags(stage_a(0), stage_b(0), 0, af[0], bf[0]);
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            const int cur = kk & 1, nxt = cur ^ 1;  // BK / 16 is even: a tile starts in buffer 0
            if (kk < BK / 16 - 1) {
                load_frags(stage_a(s), stage_b(s), kk + 1, af[nxt], bf[nxt]);
            } else {
                cp_async_wait<STAGES - 2>();  // tiles <= kt+1 have landed (this thread's copies) ...
                __syncthreads();              // ... and everyone's; stage s is read by no one now
                if (kt + STAGES < k_tiles) load_tile(kt + STAGES, s);
                cp_async_commit();
                const int s1 = (kt + 1) % STAGES;
                load_frags(stage_a(s1), stage_b(s1), 0, af[nxt], bf[nxt]);  // past the end: unused
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) mma16816(acc[i][j], af[cur][i], bf[cur][j][0], bf[cur][j][1]);
        }
    }
#else
    // prologue: STAGES-1 tiles in flight (empty groups past the end keep the count uniform)
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) load_tile(s, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<STAGES - 2>();  // tile kt has landed (this thread's copies) ...
        __syncthreads();              // ... and everyone's; stage (kt-1)%STAGES is free again
        {  // refill the stage computed in the previous iteration
            const int nt = kt + STAGES - 1;
            if (nt < k_tiles) load_tile(nt, nt % STAGES);
            cp_async_commit();
        }
        const int s = kt % STAGES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            unsigned af[4][4], bf[8][2];
            load_frags(stage_a(s), stage_b(s), kk, af, bf);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) mma16816(acc[i][j], af[i], bf[j][0], bf[j][1]);
        }
    }
#endif
    cp_async_wait<0>();

    // epilogue: each thread holds (row = lane/4 [+8], col = 2·(lane%4) + {0,1}) of every m16n8 tile
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int r = row0 + wm + i * 16 + (lane >> 2);
            const int c = col0 + wn + j * 8 + (lane & 3) * 2;  // N % 8 == 0: both columns in or out
            if (c < N) {
                if (r < M) *reinterpret_cast<unsigned*>(C + (size_t)r * N + c) = pack2(acc[i][j][0], acc[i][j][1]);
                if (r + 8 < M)
                    *reinterpret_cast<unsigned*>(C + (size_t)(r + 8) * N + c) = pack2(acc[i][j][2], acc[i][j][3]);
            }
        }
    }
}
