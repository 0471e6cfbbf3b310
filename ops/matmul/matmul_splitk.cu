// matmul_splitk.cu — C = A·B for skinny A (M ≤ 16 rows: LLM decode shapes), fp16 or bf16
// operands, fp32 accumulation, row-major A [M, K], B [K, N], C [M, N] (raw 16-bit words).
// Bandwidth-bound: B's K·N·2 bytes dominate, so the kernel streams B once through a cp.async
// ring while the ≤ 16 rows of A (zero-filled past M, re-read from L2 by every strip) meet it on
// tensor cores (mma.sync m16n8k16), and K is split so that one wave of blocks fills the device.
//
// Grid (⌈N/BN⌉ column strips, SPLIT), block 128 threads = 4 warps, each warp 32 columns of the
// strip's BN = 128 (four m16n8 tiles, 16 fp32 accumulators per thread). Block (x, s) takes the
// K tiles [s·per, min((s+1)·per, k_tiles)), per = ⌈k_tiles / SPLIT⌉ (the launcher picks SPLIT so
// that no split is empty).
// Split-K without a second launch: each block stores its fp32 16 × BN partial in ws[s]
// (SPLIT × 16 × gridDim.x·BN floats), fences, and counts itself in cnt[x]; the strip's last block
// sums the SPLIT partials in split order (the same order every launch: deterministic), rounds
// once to the operand type, writes C's M rows and sets cnt[x] back to 0 for the next launch.
// Requires K % 8 == 0 and N % 8 == 0 (16-byte cp.async rows; the launcher says so otherwise).
// Dynamic shared memory STAGES·(16·BK + BK·BN)·2 bytes (STAGES 4: 72 KiB).
//
// Tiles are XOR-swizzled as in matmul_mma.cu (A [16][8 chunks of 8]: chunk c of row r at c ^ (r & 7);
// B [BK][16 chunks]: chunk c of row k at c ^ (k & 7)), read by ldmatrix / ldmatrix.trans.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef BF16
#define BF16 1
#endif
#ifndef STAGES
#define STAGES 4
#endif
#define BK 64
#define BN 128
#define THREADS 128
#define A_TILE (16 * BK)  // elements per stage
#define B_TILE (BK * BN)

typedef unsigned short u16;

#define MMA_BF16 BF16
#include "mma_sm80.cuh"

__device__ __forceinline__ int a_off(int row, int chunk) { return row * BK + ((chunk ^ (row & 7)) << 3); }
__device__ __forceinline__ int b_off(int k, int chunk) { return k * BN + ((chunk ^ (k & 7)) << 3); }

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_splitk(const u16* __restrict__ A, const u16* __restrict__ B, u16* __restrict__ C, float* __restrict__ ws,
              unsigned* __restrict__ cnt, int M, int N, int K) {
    extern __shared__ __align__(128) u16 smem[];
    u16* As = smem;                    // STAGES × [16][BK]
    u16* Bs = smem + STAGES * A_TILE;  // STAGES × [BK][BN]
    __shared__ bool last;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int col0 = blockIdx.x * BN, split = blockIdx.y, splits = gridDim.y;
    const int k_tiles = (K + BK - 1) / BK, per = (k_tiles + splits - 1) / splits;
    const int kt0 = min(split * per, k_tiles), nt = min(kt0 + per, k_tiles) - kt0;

    auto load_tile = [&](int kt, int s) {
        const int k0 = kt * BK;
        const unsigned a_s = smem_u32(As + s * A_TILE), b_s = smem_u32(Bs + s * B_TILE);
        {  // A: 16 rows × 8 chunks, one per thread
            const int r = tid >> 3, c = tid & 7, gk = k0 + c * 8;
            const bool ok = r < M && gk < K;
            cp_async16(a_s + a_off(r, c) * 2, A + (ok ? (size_t)r * K + gk : 0), ok ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < B_TILE / 8 / THREADS; ++i) {  // B: BK rows × 16 chunks, 8 per thread
            const int id = tid + i * THREADS, k = id >> 4, c = id & 15;
            const int gk = k0 + k, gc = col0 + c * 8;
            const bool ok = gk < K && gc < N;
            cp_async16(b_s + b_off(k, c) * 2, B + (ok ? (size_t)gk * N + gc : 0), ok ? 16 : 0);
        }
    };

    float acc[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][e] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {  // prologue (empty groups keep the count uniform)
        if (s < nt) load_tile(kt0 + s, s);
        cp_async_commit();
    }
    for (int t = 0; t < nt; ++t) {
        cp_async_wait<STAGES - 2>();  // tile t has landed (this thread's copies) ...
        __syncthreads();              // ... and everyone's; the stage computed last iteration is free
        {
            const int nx = t + STAGES - 1;
            if (nx < nt) load_tile(kt0 + nx, nx % STAGES);
            cp_async_commit();
        }
        const int s = t % STAGES;
        const unsigned a_s = smem_u32(As + s * A_TILE), b_s = smem_u32(Bs + s * B_TILE);
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            unsigned af[4];  // A m16×k16: lanes 0-15 rows 0-15 at k 0-7, lanes 16-31 at k 8-15
            ldmatrix_x4(af, a_s + a_off(lane & 15, kk * 2 + (lane >> 4)) * 2);
#pragma unroll
            for (int p = 0; p < 2; ++p) {  // B k16×n16 (two n8 tiles) of the warp's 32 columns
                unsigned r[4];
                const int k = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                ldmatrix_x4_trans(r, b_s + b_off(k, (warp * 32 + p * 16) / 8 + (lane >> 4)) * 2);
                mma16816(acc[2 * p], af, r[0], r[1]);
                mma16816(acc[2 * p + 1], af, r[2], r[3]);
            }
        }
    }
    cp_async_wait<0>();

    // the partial: each thread holds rows lane/4 and lane/4 + 8, columns 2·(lane%4) + {0, 1} of
    // each of its four n8 tiles
    const int ld = gridDim.x * BN;
    float* w = ws + (size_t)split * 16 * ld;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int c = col0 + warp * 32 + j * 8 + (lane & 3) * 2, r = lane >> 2;
        *reinterpret_cast<float2*>(w + (size_t)r * ld + c) = make_float2(acc[j][0], acc[j][1]);
        *reinterpret_cast<float2*>(w + (size_t)(r + 8) * ld + c) = make_float2(acc[j][2], acc[j][3]);
    }
    __threadfence();  // the partial is visible device-wide before this block is counted
    __syncthreads();
    if (tid == 0) last = atomicAdd(cnt + blockIdx.x, 1u) == (unsigned)(splits - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();

    // the strip's last block: 16 × BN sums = 512 float4, four per thread, split order
#pragma unroll
    for (int i = 0; i < 16 * BN / 4 / THREADS; ++i) {
        const int id = tid + i * THREADS, r = id / (BN / 4), c = col0 + (id % (BN / 4)) * 4;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int s = 0; s < splits; ++s) {
            const float4 p = __ldcg(reinterpret_cast<const float4*>(ws + ((size_t)s * 16 + r) * ld + c));
            v.x += p.x; v.y += p.y; v.z += p.z; v.w += p.w;
        }
        if (r < M && c < N) {  // N % 8 == 0: the four columns are in or out together
            uint2 o;
            o.x = pack2(v.x, v.y);
            o.y = pack2(v.z, v.w);
            *reinterpret_cast<uint2*>(C + (size_t)r * N + c) = o;
        }
    }
    if (tid == 0) cnt[blockIdx.x] = 0u;  // every block of the strip has counted: ready for the next launch
}
