// reduction.cu — out = Σ x over n elements. Reads n·sizeof(in) bytes, writes one accumulator.
//
// Defines: IN_HALF / IN_INT (0/1: fp16 or int32 input; neither: fp32), BLOCK (threads per block,
// a power of two, 64..1024). The accumulator ACC is int for int32 input, float otherwise (fp16 is
// widened to fp32 on load). Counts n are 64-bit: n·sizeof(in) may exceed 2^31.
//
//   reduce_zero         one thread: out[0] = 0 (before reduce_naive's atomics)
//   reduce_naive        grid-stride loop, each thread sums its elements serially, then one
//                       atomicAdd per thread into out[0]   (order-dependent for fp32)
//   reduce_tree_shared  one element per thread, a tree in shared memory per block (sequential
//                       addressing, a barrier per level) → out[block]; relaunched on the partials
//                       until one value is left
//   reduce_coarsened    persistent grid (a few blocks per SM): each thread adds 16-byte vectors
//                       (4 × 32-bit or 8 × fp16) grid-stride into 4 accumulators, then one shared
//                       tree per block → out[block]; a second launch with one block finishes
//   reduce_warp_shuffle as coarsened with UNROLL vectors in flight per thread, a warp-shuffle
//                       tree (no shared memory but 32 warp sums), and a single-launch
//                       deterministic finish: the last block to arrive (atomic counter, after a
//                       __threadfence) sums the per-block partials in block order and resets the
//                       counter for the next launch.
// Everything but reduce_naive is deterministic for a fixed grid: no order-dependent atomics.

#ifndef IN_HALF
#define IN_HALF 0
#endif
#ifndef IN_INT
#define IN_INT 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef UNROLL
#define UNROLL 4
#endif

#if IN_INT
typedef int in_t;
typedef int acc_t;
#elif IN_HALF
typedef unsigned short in_t;  // fp16 bits: converted with cvt.f32.f16 (no cuda_fp16.h needed)
typedef float acc_t;
#else
typedef float in_t;
typedef float acc_t;
#endif

#define VEC (16 / (int)sizeof(in_t))  // elements per 16-byte vector
#define NWARPS (BLOCK / 32)

__device__ __forceinline__ float h2f(unsigned int h) {
    float f;
    unsigned short s = (unsigned short)h;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(s));
    return f;
}

__device__ __forceinline__ acc_t to_acc(in_t v) {
#if IN_HALF
    return h2f(v);
#else
    return (acc_t)v;
#endif
}

// add one 16-byte vector into four accumulators (fp16: two halves per accumulator)
__device__ __forceinline__ void add16(acc_t a[4], uint4 v) {
#if IN_HALF
    a[0] += h2f(v.x & 0xffffu) + h2f(v.x >> 16);
    a[1] += h2f(v.y & 0xffffu) + h2f(v.y >> 16);
    a[2] += h2f(v.z & 0xffffu) + h2f(v.z >> 16);
    a[3] += h2f(v.w & 0xffffu) + h2f(v.w >> 16);
#elif IN_INT
    a[0] += (int)v.x; a[1] += (int)v.y; a[2] += (int)v.z; a[3] += (int)v.w;
#else
    a[0] += __uint_as_float(v.x); a[1] += __uint_as_float(v.y);
    a[2] += __uint_as_float(v.z); a[3] += __uint_as_float(v.w);
#endif
}

__device__ __forceinline__ acc_t warp_sum(acc_t v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;  // every lane holds the warp's sum (same order in every lane: bitwise equal)
}

// Tree over BLOCK values in shared memory; thread 0 returns the block's sum.
__device__ __forceinline__ acc_t block_tree(acc_t v, acc_t* s) {
    const int tid = threadIdx.x;
    s[tid] = v;
    __syncthreads();
#pragma unroll
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();  // level k+1 reads what level k wrote
    }
    return s[0];
}

// Vector loop shared by coarsened / warp_shuffle: thread `t` of `nthreads` adds vectors
// t, t+nthreads, ... (coalesced: consecutive threads read consecutive 16-byte vectors), then the
// scalar tail [nvec·VEC, n) one element per thread. x must be 16-byte aligned.
template <int U>
__device__ __forceinline__ acc_t thread_sum(const in_t* __restrict__ x, long long n,
                                            long long t, long long nthreads) {
    acc_t a[4] = {0, 0, 0, 0};
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    const long long nvec = n / VEC;
    long long i = t;
    for (; i + (U - 1) * nthreads < nvec; i += U * nthreads) {  // U independent loads in flight
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __ldg(xv + i + u * nthreads);
#pragma unroll
        for (int u = 0; u < U; ++u) add16(a, v[u]);
    }
    for (; i < nvec; i += nthreads) add16(a, __ldg(xv + i));
    const long long tail = nvec * VEC + t;
    if (tail < n) a[0] += to_acc(x[tail]);  // < VEC elements left: one per thread
    return (a[0] + a[1]) + (a[2] + a[3]);
}

extern "C" __global__ void reduce_zero(acc_t* out) { out[0] = 0; }

extern "C" __global__ void __launch_bounds__(BLOCK) reduce_naive(const in_t* __restrict__ x,
                                                                   acc_t* out, long long n) {
    acc_t acc = 0;
    const long long stride = (long long)gridDim.x * BLOCK;
    for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) acc += to_acc(x[i]);
    atomicAdd(out, acc);
}

extern "C" __global__ void __launch_bounds__(BLOCK) reduce_tree_shared(const in_t* __restrict__ x,
                                                                         acc_t* out, long long n) {
    __shared__ acc_t s[BLOCK];
    const long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
    const acc_t sum = block_tree(i < n ? to_acc(x[i]) : (acc_t)0, s);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

extern "C" __global__ void __launch_bounds__(BLOCK) reduce_coarsened(const in_t* __restrict__ x,
                                                                       acc_t* out, long long n) {
    __shared__ acc_t s[BLOCK];
    const long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;
    const acc_t sum = block_tree(thread_sum<1>(x, n, t, (long long)gridDim.x * BLOCK), s);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

// partials: gridDim.x values; counter: one unsigned int, zero before the first launch and left
// zero by every launch.
extern "C" __global__ void __launch_bounds__(BLOCK) reduce_warp_shuffle(const in_t* __restrict__ x,
                                                                          acc_t* out, acc_t* partials,
                                                                          unsigned int* counter, long long n) {
    __shared__ acc_t warp_sums[NWARPS];
    __shared__ bool last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long t = (long long)blockIdx.x * BLOCK + threadIdx.x;

    acc_t v = warp_sum(thread_sum<UNROLL>(x, n, t, (long long)gridDim.x * BLOCK));
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < NWARPS ? warp_sums[lane] : (acc_t)0);
        if (lane == 0) {
            partials[blockIdx.x] = v;
            __threadfence();  // the partial is visible device-wide before the counter moves
            last = atomicAdd(counter, 1u) == gridDim.x - 1;
        }
    }
    __syncthreads();
    if (!last) return;
    // the last block: every other block's partial is written (their fences precede their
    // increments); sum them in a fixed order: thread i takes partials i, i+BLOCK, ...
    __threadfence();
    acc_t a = 0;
    for (unsigned int i = threadIdx.x; i < gridDim.x; i += BLOCK) a += ((volatile acc_t*)partials)[i];
    a = warp_sum(a);
    if (lane == 0) warp_sums[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = warp_sum(lane < NWARPS ? warp_sums[lane] : (acc_t)0);
        if (lane == 0) {
            out[0] = a;
            *counter = 0;  // every block has arrived: ready for the next launch
        }
    }
}
