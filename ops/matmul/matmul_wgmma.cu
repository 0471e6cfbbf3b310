// matmul_wgmma.cu — C = A·B on Hopper tensor cores with wgmma (sm_90a), fp16 or bf16 operands, fp32
// accumulation, row-major A [M, K], B [K, N], C [M, N] in the operand type (raw 16-bit words).
// Reads (M·K + K·N)·2 and writes M·N·2 bytes at the fewest; 2·M·N·K flops.
//
// Block tile BM×256×64 with BM = 64·WGS, 128·WGS threads = WGS warpgroups (2: 128×256, 3: 192×256);
// warpgroup w computes rows 64w..64w+63 of the tile, all 256 columns, with one
// wgmma.mma_async.m64n256k16 per k16 step (128 fp32 accumulators per thread). Both operands are
// read by the tensor cores straight from shared memory through matrix descriptors; nothing passes
// through registers but the accumulators. Launch: groups = ⌈M/BM⌉·⌈N/256⌉ (1-D, grouped order as
// matmul_mma.cu: GROUP_M tile-rows per group), block = 128·WGS, dynamic shared memory
// STAGES·(BM + 256)·128 bytes + 1 KiB (the extra KiB aligns the ring to 1024 bytes; WGS 2 × 4
// stages: 193 KiB, WGS 3 × 4 stages: 225 KiB, one block per SM). Requires K % 8 == 0 and N % 8 == 0
// (16-byte rows; the factory pads other shapes).
//
// Shared-memory layout: the descriptors' 128-byte-swizzle canonical forms (an 8-row × 128-byte
// atom, 1024-byte aligned, whose 16-byte chunk c of row r is stored at chunk c ^ r):
//   A stage, K-major: [BM rows m][64 k], 128-byte rows: byte m·128 + ((kc ^ m%8)·16) for chunk kc
//     (8 k); descriptor SBO 1024 (8-row groups along M), LBO unused; a k16 step starts 32 bytes on.
//   B stage, N-major (B as stored, wgmma's transpose flag set — allowed for 16-bit types): four
//     [64 k][64 n] blocks of 128-byte rows: byte (nc/8)·8192 + k·128 + ((nc%8 ^ k%8)·16) for chunk nc
//     (8 n); descriptor SBO 1024 (8-row groups along K), LBO 8192 (64-column blocks along N); a k16
//     step starts 2048 bytes on.
// (A no-swizzle layout — 8×16-byte core matrices, each 128 contiguous bytes — ran at 207 TFLOP/s
// on the H200 against 421 for mma_sync: the tensor cores read rows of eight core matrices 1 KiB
// apart, all in the same banks. Commit 59626b1, results/nvidia-h200/probes-20261202-session10.)
//
// Copies (cp.async, 16 bytes each, zero-filled past M, N and K): eight consecutive lanes copy one
// 128-byte row (one swizzle row: eight distinct chunk positions, no bank conflicts; 128 contiguous
// bytes of global memory). EVEN (the tiles divide M, N and K): no bounds, fixed shared-memory
// offsets, sources advanced by a tile per load — ~190 instructions per warp and tile were the
// bounded copies' address arithmetic (sm_90a SASS), and Nsight Compute put the issue slots at
// 34 % busy with dispatch stalls the largest stall reason (SM 66 % busy against cuBLAS's 93 %).
//
// Pipeline (STAGES-deep ring, PREFETCH = STAGES − 2 tiles ahead): per K tile — wait for its copies,
// fence.proxy.async (cp.async writes are generic-proxy writes; the tensor cores read through the
// async proxy), __syncthreads, refill the stage of tile kt − 2, issue the tile's four wgmmas as one
// group, and wait until at most that group is in flight (so tile kt − 1's group is done: after the
// next barrier its stage may be refilled). The wgmmas of one tile overlap the barrier, the copies
// and the issue of the next. (Refilling tile kt − 1's stage right after that wait, behind a second
// barrier — three tiles in flight instead of two — was slower on the H200: hot 2.209 against 2.124
// ms at 8192³ bf16, probes-20261202-session10/759e6da.)
//
// Accumulator fragment (m64nNk16, f32): thread t of warpgroup w, warp q = (t/32)%4, lane l, g = l/4,
// c = l%4: d[4j + 0, 1] = C[64w + 16q + g][8j + 2c + 0, 1], d[4j + 2, 3] = row + 8, j = 0..31.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef BF16
#define BF16 1
#endif
#ifndef STAGES
#define STAGES 4  // ≥ 3
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef EVEN
#define EVEN 0  // 1: M % BM == 0, N % 256 == 0, K % 64 == 0 (no bounds in the copies)
#endif
#ifndef WGS
#define WGS 2  // warpgroups: 2 (128×256 tiles) or 3 (192×256)
#endif
#define BM (64 * WGS)
#define BN 256
#define BK 64  // one 128-byte swizzle row of A per row
#define THREADS (128 * WGS)
#define PREFETCH (STAGES - 2)
#define A_STAGE (BM * BK * 2)  // bytes
#define B_STAGE (BK * BN * 2)
#define A_COPIES (BM * BK / 8 / THREADS)  // 16-byte copies per thread and tile (4)
#define B_CHUNKS (BK * BN / 8)
#define B_COPIES ((B_CHUNKS + THREADS - 1) / THREADS)  // the last one guarded where THREADS ∤ B_CHUNKS

typedef unsigned short u16;

#define MMA_BF16 BF16
#include "mma_sm80.cuh"
#include "mbarrier.cuh"

#if BF16
#define WG_TYPE "bf16"
#else
#define WG_TYPE "f16"
#endif

// 128-byte-swizzle descriptor of the shared-memory operand starting at byte address addr
__device__ __forceinline__ unsigned long long wg_desc(unsigned addr, unsigned lbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
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

// one K tile (k0..k0+63) of A's rows row0.. and B's columns col0.. into the stage at (sa, sb), by NT
// threads (tid < NT), zero-filled past M, N and K: chunk q = tid + NT·i of the tile, 8 per row
// (A: row m = q/8, chunk kc = q%8; B: row k = q/32, chunk nc = q%32)
template <int NT>
__device__ __forceinline__ void copy_tile(unsigned sa, unsigned sb, const u16* A, const u16* B, int M, int N,
                                          int K, int row0, int col0, int k0, int tid) {
#pragma unroll
    for (int i = 0; i < BM * BK / 8 / NT; ++i) {
        const int q = tid + NT * i, m = q >> 3, kc = q & 7;
        const int gr = row0 + m, gk = k0 + kc * 8;
        const bool ok = gr < M && gk < K;
        cp_async16(sa + m * 128 + ((kc ^ (m & 7)) << 4), A + (ok ? (size_t)gr * K + gk : 0), ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < (B_CHUNKS + NT - 1) / NT; ++i) {
        const int q = tid + NT * i, k = q >> 5, nc = q & 31;
        if (B_CHUNKS % NT != 0 && q >= B_CHUNKS) break;
        const int gk = k0 + k, gc = col0 + nc * 8;
        const bool ok = gk < K && gc < N;
        cp_async16(sb + (nc >> 3) * 8192 + k * 128 + (((nc & 7) ^ (k & 7)) << 4), B + (ok ? (size_t)gk * N + gc : 0),
                   ok ? 16 : 0);
    }
}

// the block's C tile in grouped order (GROUP_M tile-rows per group, walked column by column)
__device__ __forceinline__ void tile_origin(int M, int N, int& row0, int& col0) {
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int in_group = GROUP_M * tiles_n;
    const int first_m = (blockIdx.x / in_group) * GROUP_M;
    const int size_m = min(tiles_m - first_m, GROUP_M);
    row0 = (first_m + (blockIdx.x % in_group) % size_m) * BM;
    col0 = ((blockIdx.x % in_group) / size_m) * BN;
}

// rows r0 + 16·(warp%4) + lane/4 (+8) of the warpgroup's 64×256 accumulator tile into C
__device__ __forceinline__ void store_tile(const float (&d)[128], u16* C, int M, int N, int r0, int col0, int warp,
                                           int lane) {
    const int r = r0 + (warp & 3) * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        const int c = col0 + j * 8 + (lane & 3) * 2;  // N % 8 == 0: both columns in or out
        if (c < N) {
            if (r < M) *reinterpret_cast<unsigned*>(C + (size_t)r * N + c) = pack2(d[4 * j], d[4 * j + 1]);
            if (r + 8 < M) *reinterpret_cast<unsigned*>(C + (size_t)(r + 8) * N + c) = pack2(d[4 * j + 2], d[4 * j + 3]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
matmul_wgmma(const u16* __restrict__ A, const u16* __restrict__ B, u16* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned s_a = (smem_u32(smem) + 1023) & ~1023u, s_b = s_a + STAGES * A_STAGE;

    int row0, col0;
    tile_origin(M, N, row0, col0);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // copy i of a thread: chunk q = tid + THREADS·i of the tile, 8 per row (A: row m = q/8, chunk
    // kc = q%8; B: row k = q/32, chunk nc = q%32)
#if EVEN
    // the tiles divide M, N and K: no bounds; each copy's shared-memory offset is fixed, its source a
    // fixed distance from one pointer per operand, advanced by a tile per load (tiles load in order)
    unsigned a_dst[A_COPIES], b_dst[B_COPIES];
#pragma unroll
    for (int i = 0; i < A_COPIES; ++i) {
        const int m = (tid >> 3) + i * (THREADS / 8), kc = tid & 7;
        a_dst[i] = m * 128 + ((kc ^ (m & 7)) << 4);
    }
#pragma unroll
    for (int i = 0; i < B_COPIES; ++i) {
        const int k = (tid >> 5) + i * (THREADS / 32), nc = tid & 31;
        b_dst[i] = (nc >> 3) * 8192 + k * 128 + (((nc & 7) ^ (k & 7)) << 4);
    }
    const u16* a_src = A + (size_t)(row0 + (tid >> 3)) * K + (tid & 7) * 8;
    const u16* b_src = B + (size_t)(tid >> 5) * N + col0 + (tid & 31) * 8;
    const size_t a_rows = (size_t)(THREADS / 8) * K, b_rows = (size_t)(THREADS / 32) * N;
    auto load_tile = [&](int, int s) {
#pragma unroll
        for (int i = 0; i < A_COPIES; ++i) cp_async16(s_a + s * A_STAGE + a_dst[i], a_src + i * a_rows, 16);
#pragma unroll
        for (int i = 0; i < B_COPIES; ++i) {
            if (B_CHUNKS % THREADS != 0 && tid + THREADS * i >= B_CHUNKS) break;
            cp_async16(s_b + s * B_STAGE + b_dst[i], b_src + i * b_rows, 16);
        }
        a_src += BK;
        b_src += (size_t)BK * N;
    };
#else
    auto load_tile = [&](int kt, int s) {
        copy_tile<THREADS>(s_a + s * A_STAGE, s_b + s * B_STAGE, A, B, M, N, K, row0, col0, kt * BK, tid);
    };
#endif

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
        {  // into the stage of tile kt − 2
            const int nt = kt + PREFETCH;
            if (nt < k_tiles) load_tile(nt, nt % STAGES);
            cp_async_commit();
        }
        const int s = kt % STAGES;
        const unsigned long long da = wg_desc(s_a + s * A_STAGE + wg * 64 * 128, 16),
                                 db = wg_desc(s_b + s * B_STAGE, 8192);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < BK / 16; ++j) wgmma_m64n256k16(d, da + j * 2, db + j * 128);  // +32, +2048 bytes
        wgmma_commit();
        wgmma_wait<1>();
        fence_acc(d);
    }
    wgmma_wait<0>();
    fence_acc(d);
    cp_async_wait<0>();

    store_tile(d, C, M, N, row0 + wg * 64, col0, warp, lane);
}

// ---- matmul_wgmma_ws (probes, WGS 2): a producer warpgroup beside the consumers ----------------
//
// Block = 128·(WGS + 1) threads: warpgroup 0 copies (the bounded copy_tile, every K tile), warpgroups
// 1..WGS compute (warpgroup w: rows 64·(w − 1).. of the tile). Stages change hands through
// mbarriers instead of a block-wide barrier per K tile: full[s] completes when the producer's 128
// threads' copies into stage s have landed (cp.async.mbarrier.arrive.noinc: 128 arrivals), empty[s]
// when every consumer warp is past the wgmma group that read it (lane 0 of each consumer warp
// arrives after the next tile's wgmma.wait_group 1: 4·WGS arrivals). Use u of a stage waits for
// phase parity u & 1 of full (consumers) and, from the second use on, of empty's previous phase
// (producer), so the producer runs up to STAGES − 1 tiles ahead. The producer gives registers up
// (setmaxnreg.dec 40) and the consumers take them (setmaxnreg.inc 232): 128·40 + 256·232 ≤ 65536.
// Dynamic shared memory: the ring (as matmul_wgmma) + 16·STAGES bytes of barriers.
#if WGS == 2
#define WS_THREADS (128 * (WGS + 1))

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {  // until that phase is complete
    asm volatile("{\n.reg .pred done;\nAGAIN:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra AGAIN;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

// full[s] expecting full_count arrivals, empty[s] one per consumer warp, for every stage
__device__ __forceinline__ void init_barriers(unsigned full, unsigned empty, unsigned full_count) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full + 8 * s, full_count);
            mbar_init(empty + 8 * s, 4 * WGS);
        }
        mbar_init_fence();
    }
    __syncthreads();
}

// consumer warpgroup cw of the warp-specialised kernels: K tile kt waits for full[kt % STAGES]
// (phase parity (kt / STAGES) & 1), runs the stage's wgmmas, and once the next tile's group is
// issued and the previous one done, lane 0 of each warp releases that tile's stage (empty)
__device__ __forceinline__ void consume(float (&d)[128], unsigned s_a, unsigned s_b, unsigned full, unsigned empty,
                                        int k_tiles, int cw, int lane, bool proxy_fence) {
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        mbar_wait(full + 8 * s, (kt / STAGES) & 1);
        if (proxy_fence) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // cp.async data
        const unsigned long long da = wg_desc(s_a + s * A_STAGE + cw * 64 * 128, 16),
                                 db = wg_desc(s_b + s * B_STAGE, 8192);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < BK / 16; ++j) wgmma_m64n256k16(d, da + j * 2, db + j * 128);
        wgmma_commit();
        wgmma_wait<1>();
        fence_acc(d);
        if (kt > 0 && lane == 0) mbar_arrive(empty + 8 * ((kt - 1) % STAGES));  // tile kt − 1 is read
    }
    wgmma_wait<0>();
    fence_acc(d);
}

// ---- matmul_wgmma_tma (the wgmma_tma variant, WGS 2): the same with TMA loads ---------------------
//
// One thread of the producer warpgroup loads each stage with five cp.async.bulk.tensor.2d copies
// (A: one 64 (k) × 128 (m) box; B: four 64 (n) × 64 (k) boxes, one per 64-column block) through
// tensor maps made on the host (tmaps: A's at byte 0, B's at byte 128 of a device buffer; bf16 or
// fp16, SWIZZLE_128B, out-of-bounds elements read as zeros, so no bounds here). The 128-byte
// swizzle of TMA is the layout the wgmma descriptors expect. full[s] counts one arrival (the
// producer's arrive.expect_tx of the stage's 48 KiB) plus the copies' bytes.

// the warp-specialised kernels' body: USE_TMA picks the producer (TMA from the tensor maps, or
// the 128 producer threads' cp.async copies from A and B)
template <bool USE_TMA>
__device__ __forceinline__ void ws_body(const u16* __restrict__ A, const u16* __restrict__ B,
                                        const unsigned char* __restrict__ tmaps, u16* __restrict__ C, int M, int N,
                                        int K) {
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned s_a = (smem_u32(smem) + 1023) & ~1023u, s_b = s_a + STAGES * A_STAGE;
    const unsigned full = s_b + STAGES * B_STAGE, empty = full + 8 * STAGES;
    int row0, col0;
    tile_origin(M, N, row0, col0);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int k_tiles = (K + BK - 1) / BK;
    init_barriers(full, empty, USE_TMA ? 1 : 128);
    if (warp < 4) {  // the producer warpgroup
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (USE_TMA && tid != 0) return;
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int s = kt % STAGES;
            if (kt >= STAGES) mbar_wait(empty + 8 * s, ((kt / STAGES) & 1) ^ 1);
            if constexpr (USE_TMA) {
                mbar_arrive_expect_tx(full + 8 * s, A_STAGE + B_STAGE);
                tma_2d(s_a + s * A_STAGE, tmaps, kt * BK, row0, full + 8 * s);
#pragma unroll
                for (int j = 0; j < BN / 64; ++j)
                    tma_2d(s_b + s * B_STAGE + j * 8192, tmaps + 128, col0 + 64 * j, kt * BK, full + 8 * s);
            } else {
                copy_tile<128>(s_a + s * A_STAGE, s_b + s * B_STAGE, A, B, M, N, K, row0, col0, kt * BK, tid);
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(full + 8 * s) : "memory");
            }
        }
        cp_async_wait<0>();
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.f;
    consume(d, s_a, s_b, full, empty, k_tiles, warp / 4 - 1, lane, !USE_TMA);
    store_tile(d, C, M, N, row0 + (warp / 4 - 1) * 64, col0, warp, lane);
}

extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)
matmul_wgmma_ws(const u16* __restrict__ A, const u16* __restrict__ B, u16* __restrict__ C, int M, int N, int K) {
    ws_body<false>(A, B, nullptr, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(WS_THREADS, 1)
matmul_wgmma_tma(const unsigned char* __restrict__ tmaps, u16* __restrict__ C, int M, int N, int K) {
    ws_body<true>(nullptr, nullptr, tmaps, C, M, N, K);
}
#endif
