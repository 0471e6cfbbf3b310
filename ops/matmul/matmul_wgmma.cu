// matmul_wgmma.cu — C = A·B on Hopper tensor cores with wgmma (sm_90a), fp16 or bf16 operands, fp32
// accumulation, row-major A [M, K], B [K, N], C [M, N] in the operand type (raw 16-bit words).
// Reads (M·K + K·N)·2 and writes M·N·2 bytes at the fewest; 2·M·N·K flops.
//
// Block tile 128×256×BK, 256 threads = two warpgroups; warpgroup w computes rows 64w..64w+63 of
// the tile, all 256 columns, with one wgmma.mma_async.m64n256k16 per k16 step (128 fp32
// accumulators per thread). Both operands are read by the tensor cores straight from shared memory
// through matrix descriptors; nothing passes through registers but the accumulators. Launch:
// groups = ⌈M/128⌉·⌈N/256⌉ (1-D, grouped order as matmul_mma.cu: GROUP_M tile-rows per group),
// block = 256, dynamic shared memory STAGES·(128 + 256)·BK·2 bytes (BK 64 × 4 stages: 192 KiB, one
// block per SM). Requires K % 8 == 0 and N % 8 == 0 (16-byte rows; the factory pads other shapes).
//
// Shared-memory layout: the descriptors' no-swizzle ("interleave") canonical form. A core matrix
// is 8 rows × 16 bytes, stored as 128 contiguous bytes; the descriptor gives the byte distance
// between core matrices adjacent along K (LBO) and along M or N (SBO).
//   A stage, K-major (rows m, 16-byte chunks kc of 8 k): byte (m/8)·16·BK + kc·128 + (m%8)·16
//   B stage, N-major (rows k, 16-byte chunks nc of 8 n): byte nc·16·BK + (k/8)·128 + (k%8)·16
// so LBO = 128 and SBO = 16·BK for both; B is N-major (the row-major B as stored): wgmma's
// transpose flag for B is set (allowed for 16-bit types). A k16 step is two core matrices along K:
// its descriptors start 256 bytes after the previous step's.
//
// Copies (cp.async, 16 bytes each, zero-filled past M, N and K): eight consecutive lanes write one
// core matrix's 128 contiguous bytes (no bank conflicts); in global memory a warp reads 8 rows × 64
// bytes of A, or 16 rows × 32 bytes (one sector) of B.
//
// Pipeline (STAGES-deep ring, PREFETCH = STAGES − 2 tiles ahead): per K tile — wait for its copies,
// fence.proxy.async (cp.async writes are generic-proxy writes; the tensor cores read through the
// async proxy), __syncthreads, refill the stage of tile kt − 2, issue the tile's BK/16 wgmmas as
// one group, and wait until at most that group is in flight (so tile kt − 1's group is done: after
// the next barrier its stage may be refilled). The wgmmas of one tile overlap the barrier, the
// copies and the issue of the next.
//
// Accumulator fragment (m64nNk16, f32): thread t of warpgroup w, warp q = (t/32)%4, lane l, g = l/4,
// c = l%4: d[4j + 0, 1] = C[64w + 16q + g][8j + 2c + 0, 1], d[4j + 2, 3] = row + 8, j = 0..31.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef BF16
#define BF16 1
#endif
#ifndef BK
#define BK 64  // 32 or 64
#endif
#ifndef STAGES
#define STAGES 4  // ≥ 3
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#define BM 128
#define BN 256
#define THREADS 256
#define PREFETCH (STAGES - 2)
#define KC (BK / 8)                 // 16-byte chunks of an A row (core matrices along K)
#define A_STAGE (BM * BK * 2)       // bytes
#define B_STAGE (BK * BN * 2)
#define SBO (16 * BK)               // bytes between core matrices along M (A) or N (B)
#define A_COPIES (BM * KC / THREADS)       // 16-byte copies per thread and tile
#define B_COPIES (BK * (BN / 8) / THREADS)

typedef unsigned short u16;

#define MMA_BF16 BF16
#include "mma_sm80.cuh"

#if BF16
#define WG_TYPE "bf16"
#else
#define WG_TYPE "f16"
#endif

// no-swizzle descriptor of the shared-memory operand starting at byte address addr
__device__ __forceinline__ unsigned long long wg_desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(128 >> 4) << 16) |
           ((unsigned long long)(SBO >> 4) << 32);
}

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])

// d += A·B for a 64×16 A and a 16×256 B (descriptors da, db; B transposed: N-major)
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." WG_TYPE "." WG_TYPE " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56), D8(64), D8(72), D8(80), D8(88),
          D8(96), D8(104), D8(112), D8(120)
        : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// the accumulators are written by the tensor cores until the wait: keep the compiler from moving
// their uses across it
__device__ __forceinline__ void fence_acc(float (&d)[128]) {
#pragma unroll
    for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_wgmma(const u16* __restrict__ A, const u16* __restrict__ B, u16* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned s_a = smem_u32(smem), s_b = s_a + STAGES * A_STAGE;

    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (blockIdx.x / in_group) * GROUP_M;
    const int size_m = min(tiles_m - first_m, GROUP_M);
    const int row0 = (first_m + (blockIdx.x % in_group) % size_m) * BM;
    const int col0 = ((blockIdx.x % in_group) / size_m) * BN;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // copy i of a thread: A (m, kc) with m%8 = lane%8, kc%4 = lane/8, u = warp + 8i → kc/4 = u % (KC/4),
    // m/8 = u / (KC/4); B (k, nc) with k%8 = lane%8, nc%2 = (lane/8)%2, (k/8)%2 = lane/16,
    // u = warp + 8i → nc/2 = u % 16, k/16 = u / 16
    auto load_tile = [&](int kt, int s) {
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < A_COPIES; ++i) {
            const int u = warp + 8 * i;
            const int m = (u / (KC / 4)) * 8 + (lane & 7), kc = (u % (KC / 4)) * 4 + (lane >> 3);
            const int gr = row0 + m, gk = k0 + kc * 8;
            const bool ok = gr < M && gk < K;
            cp_async16(s_a + s * A_STAGE + (m >> 3) * SBO + kc * 128 + (m & 7) * 16,
                       A + (ok ? (size_t)gr * K + gk : 0), ok ? 16 : 0);
        }
#pragma unroll
        for (int i = 0; i < B_COPIES; ++i) {
            const int u = warp + 8 * i;
            const int k = (u / 16) * 16 + (lane >> 4) * 8 + (lane & 7), nc = (u % 16) * 2 + ((lane >> 3) & 1);
            const int gk = k0 + k, gc = col0 + nc * 8;
            const bool ok = gk < K && gc < N;
            cp_async16(s_b + s * B_STAGE + nc * SBO + (k >> 3) * 128 + (k & 7) * 16,
                       B + (ok ? (size_t)gk * N + gc : 0), ok ? 16 : 0);
        }
    };

    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.f;

    const int k_tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < PREFETCH; ++s) {
        if (s < k_tiles) load_tile(s, s);
        cp_async_commit();
    }
    const int wg = warp >> 2;
    for (int kt = 0; kt < k_tiles; ++kt) {
        cp_async_wait<PREFETCH - 1>();  // tile kt has landed (this thread's copies) ...
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();  // ... everyone's; every warpgroup is past tile kt − 2's group
        {
            const int nt = kt + PREFETCH;
            if (nt < k_tiles) load_tile(nt, nt % STAGES);
            cp_async_commit();
        }
        const int s = kt % STAGES;
        const unsigned long long da = wg_desc(s_a + s * A_STAGE + wg * 8 * SBO), db = wg_desc(s_b + s * B_STAGE);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < BK / 16; ++j) wgmma_m64n256k16(d, da + j * 16, db + j * 16);  // +256 bytes
        wgmma_commit();
        wgmma_wait<1>();
        fence_acc(d);
    }
    wgmma_wait<0>();
    fence_acc(d);
    cp_async_wait<0>();

    const int r = row0 + wg * 64 + (warp & 3) * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        const int c = col0 + j * 8 + (lane & 3) * 2;  // N % 8 == 0: both columns in or out
        if (c < N) {
            if (r < M) *reinterpret_cast<unsigned*>(C + (size_t)r * N + c) = pack2(d[4 * j], d[4 * j + 1]);
            if (r + 8 < M) *reinterpret_cast<unsigned*>(C + (size_t)(r + 8) * N + c) = pack2(d[4 * j + 2], d[4 * j + 3]);
        }
    }
}
