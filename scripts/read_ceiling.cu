// Plain reads of a buffer in one kernel, in several forms (scripts/read_ceiling.py times them):
// how fast can one CUDA kernel read ~100–300 MB, and which form gets there? Every kernel XORs all
// the 32-bit words it reads into *out (one atomicXor per warp), and the script checks that value
// against the host's, so a form that skips data fails.
//
//   rd_empty  one thread, no reads: the timed window's fixed cost
//   rd_lmem   a full grid with LMEM bytes of static shared memory per block, no reads
//   rd_ldg    grid-stride 16-byte loads, U of them in flight per thread before any is used;
//             NC 1: ld.global.nc.L1::no_allocate.L2::256B (no L1 line, 256-byte L2 fetch);
//             CHUNK 1: each block reads one contiguous chunk instead of the grid-wide stride
//   rd_bulk   TMA bulk copies (cp.async.bulk, no tensor map) into a ring of STAGES stages of
//             STAGE_BYTES per block, issued by one thread and completed through mbarriers; the
//             block's threads XOR each landed stage out of shared memory; chunks dealt round-robin
//             over the blocks, or (CHUNK 1) one contiguous range of chunks per block, as
//             gemv_lowbit_tma splits its work
#ifndef U
#define U 4
#endif
#ifndef NC
#define NC 0
#endif
#ifndef CHUNK
#define CHUNK 0
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef STAGE_BYTES
#define STAGE_BYTES 16384
#endif
#ifndef SEG
#define SEG STAGE_BYTES  // bytes per bulk copy
#endif
#ifndef ROWB
#define ROWB 0  // > 0: chunks are a 16-row GEMV tile's segments of rows ROWB bytes long (bulk_load)
#endif
#ifndef PAR
#define PAR 0  // 1: warp 0's lanes issue a chunk's copies in parallel
#endif

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

__device__ __forceinline__ void publish(unsigned acc, unsigned* out) {
    for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) atomicXor(out, acc);
}

__device__ __forceinline__ uint4 ld16(const uint4* p) {
#if NC
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
#else
    return __ldg(p);
#endif
}

extern "C" __global__ void rd_empty(const uint4* __restrict__ a, long long n16, unsigned* out) {
    if (threadIdx.x == 0 && blockIdx.x == 0 && n16 < 0) *out = fold(a[0]);
}

// rd_lmem: a grid of blocks with LMEM bytes of static shared memory and no reads
#ifndef LMEM
#define LMEM 16
#endif
extern "C" __global__ void rd_lmem(const uint4* __restrict__ a, long long n16, unsigned* out) {
    __shared__ uint4 pad[LMEM / 16];
    if (n16 < 0) {
        pad[threadIdx.x % (LMEM / 16)] = a[threadIdx.x];
        __syncthreads();
        *out = fold(pad[(threadIdx.x + 1) % (LMEM / 16)]);
    }
}

extern "C" __global__ void rd_ldg(const uint4* __restrict__ a, long long n16, unsigned* out) {
#if CHUNK
    const long long per = (n16 + gridDim.x - 1) / gridDim.x;
    const long long lo = blockIdx.x * per, hi = min(n16, lo + per);
    long long i = lo + threadIdx.x;
    const long long stride = blockDim.x;
#else
    const long long hi = n16;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
#endif
    unsigned acc = 0;
    for (; i + (U - 1) * stride < hi; i += U * stride) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = ld16(a + i + u * stride);
#pragma unroll
        for (int u = 0; u < U; ++u) acc ^= fold(v[u]);
    }
    for (; i < hi; i += stride) acc ^= fold(ld16(a + i));
    publish(acc, out);
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900  // cp.async.bulk and mbarrier tx counts: sm_90
#include "mbarrier.cuh"

// chunk c into the stage at dst: STAGE_BYTES / SEG copies of SEG bytes. ROWB 0: the chunk is
// STAGE_BYTES contiguous bytes; ROWB > 0: the buffer is read as rows of ROWB bytes, and chunk c is
// segment kc = c mod (ROWB/SEG) of each of STAGE_BYTES/SEG consecutive rows (a GEMV's 16-row tile).
// Called by warp 0: lane 0 posts the byte count; with PAR, lane r issues segment r, else lane 0 all.
__device__ __forceinline__ void bulk_load(unsigned bar, unsigned dst, const unsigned char* a, long long c) {
    constexpr int NSEG = STAGE_BYTES / SEG;
    const int lane = threadIdx.x & 31;
    if (lane == 0) mbar_arrive_expect_tx(bar, STAGE_BYTES);
    for (int r = PAR ? lane : (lane == 0 ? 0 : NSEG); r < NSEG; r += PAR ? 32 : 1) {
        const unsigned char* src;
        if (ROWB == 0) {
            src = a + c * STAGE_BYTES + (long long)r * SEG;
        } else {
            const long long tile = c / (ROWB / SEG), kc = c % (ROWB / SEG);
            src = a + (tile * NSEG + r) * ROWB + kc * SEG;
        }
        bulk_1d(dst + r * SEG, src, SEG, bar);
    }
}

// chunk c (STAGE_BYTES each) of the buffer goes to block c % gridDim.x (CHUNK 1: block b reads
// chunks [C·b/G, C·(b+1)/G) in order); the vectors past the last whole chunk are read with plain
// loads by the whole grid
extern "C" __global__ void rd_bulk(const uint4* __restrict__ a, long long n16, unsigned* out) {
    constexpr int V = STAGE_BYTES / 16;
    extern __shared__ __align__(128) uint4 ring[];
    __shared__ __align__(8) unsigned long long full[STAGES];
    // whole chunks (ROWB > 0: whole 16-row tiles of them); the rest is read with plain loads
    const long long chunks = ROWB == 0 ? n16 / V
                                       : n16 * 16 / ((long long)(STAGE_BYTES / SEG) * ROWB) * (ROWB / SEG);
    const unsigned char* ab = reinterpret_cast<const unsigned char*>(a);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(smem_u32(&full[s]), 1);
        mbar_init_fence();
    }
    __syncthreads();
    // this block's k-th chunk, and how many it has
#if CHUNK
    const long long lo = chunks * blockIdx.x / gridDim.x, mine = chunks * (blockIdx.x + 1) / gridDim.x - lo;
#define RD_CHUNK(k) (lo + (k))
#else
    const long long mine = chunks > blockIdx.x ? (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
#define RD_CHUNK(k) (blockIdx.x + (long long)(k) * gridDim.x)
#endif
    if (threadIdx.x < 32) {
        for (int s = 0; s < STAGES && s < mine; ++s)
            bulk_load(smem_u32(&full[s]), smem_u32(ring + s * V), ab, RD_CHUNK(s));
    }
    unsigned acc = 0;
    for (long long k = 0; k < mine; ++k) {
        const int s = (int)(k % STAGES);
        mbar_wait_parity(smem_u32(&full[s]), (unsigned)(k / STAGES) & 1);
        for (int i = threadIdx.x; i < V; i += blockDim.x) acc ^= fold(ring[s * V + i]);
        __syncthreads();  // every thread is done with stage s before it is refilled
        if (threadIdx.x < 32 && k + STAGES < mine)
            bulk_load(smem_u32(&full[s]), smem_u32(ring + s * V), ab, RD_CHUNK(k + STAGES));
    }
#undef RD_CHUNK
    for (long long i = chunks * V + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n16;
         i += (long long)gridDim.x * blockDim.x)
        acc ^= fold(a[i]);
    publish(acc, out);
}
#endif
