// reduction.cl — out = Σ x over n elements. Reads n·sizeof(in) bytes, writes one accumulator.
//
// Defines: IN_HALF / IN_INT (0/1: fp16 or int32 input; neither: fp32), BLOCK (work-group size,
// a power of two), SUBGROUPS (1: cl_khr_subgroups / cl_intel_subgroups; 2: NVIDIA warp
// shuffles through inline PTX; 0: neither, reduce_subgroup is left out). fp16 is read with
// vload_half (core OpenCL, no cl_khr_fp16) and accumulated in fp32. Indices are 64-bit.
//
//   reduce_zero         out[0] = 0 (before reduce_naive's atomics)
//   reduce_naive        grid-stride loop, each work-item sums serially, then one atomic add per
//                       work-item (int: atomic_add; float: an atomic_cmpxchg loop on the bits)
//   reduce_tree_shared  one element per work-item, a tree in local memory per work-group
//                       (a barrier per level) → out[group]; relaunched on the partials
//   reduce_coarsened    a few work-groups per compute unit; each work-item adds 16-byte vectors
//                       (4 × 32-bit or 8 × fp16) grid-stride into a 4-wide accumulator, then one
//                       local-memory tree per group → out[group]; one group finishes (2nd launch)
//   reduce_subgroup     as coarsened, with sub-group reductions (sub_group_reduce_add, or warp
//                       shuffles on NVIDIA) instead of the local tree; same two-launch finish
// Everything but reduce_naive is deterministic for a fixed grid.

#ifndef IN_HALF
#define IN_HALF 0
#endif
#ifndef IN_INT
#define IN_INT 0
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef SUBGROUPS
#define SUBGROUPS 0
#endif

#if IN_INT
typedef int in_t;
typedef int acc_t;
typedef int4 acc4_t;
#define LOAD1(i, p) ((p)[i])
#elif IN_HALF
#include "halfvec.cl"
typedef half in_t;
typedef float acc_t;
typedef float4 acc4_t;
#define LOAD1(i, p) vload_half((i), (p))
#else
typedef float in_t;
typedef float acc_t;
typedef float4 acc4_t;
#define LOAD1(i, p) ((p)[i])
#endif

// 16 bytes = VEC elements
#define VEC (16 / (int)sizeof(in_t))

// the i-th 16-byte vector of x as a 4-wide sum (a vector-pointer access: buffers are 16-byte
// aligned, and vloadn could only assume element alignment); fp16: 8 halves → 4 pair sums
acc4_t vec16(__global const in_t* restrict x, long i) {
#if IN_HALF
    const float8 f = ldh8(x + 8 * i);
    return f.lo + f.hi;
#else
    return ((__global const acc4_t*)x)[i];
#endif
}

acc_t block_tree(acc_t v, __local acc_t* s) {
    const int lid = get_local_id(0);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (lid < stride) s[lid] += s[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);  // level k+1 reads what level k wrote
    }
    return s[0];
}

// work-item t of nthreads: 16-byte vectors t, t+nthreads, ... (coalesced; four loads issued
// before their adds), then one element of the scalar tail [nvec·VEC, n)
acc_t thread_sum(__global const in_t* restrict x, long n, long t, long nthreads) {
    acc4_t a = (acc4_t)(0);
    const long nvec = n / VEC;
    long i = t;
    for (; i + 3 * nthreads < nvec; i += 4 * nthreads) {  // 4 independent loads in flight
        const acc4_t v0 = vec16(x, i), v1 = vec16(x, i + nthreads);
        const acc4_t v2 = vec16(x, i + 2 * nthreads), v3 = vec16(x, i + 3 * nthreads);
        a += v0;
        a += v1;
        a += v2;
        a += v3;
    }
    for (; i < nvec; i += nthreads) a += vec16(x, i);
    const long tail = nvec * VEC + t;
    if (tail < n) a.x += LOAD1(tail, x);
    return (a.x + a.y) + (a.z + a.w);
}

__kernel void reduce_zero(__global acc_t* out) { out[0] = 0; }

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void reduce_naive(__global const in_t* restrict x, __global acc_t* out, long n) {
    acc_t acc = 0;
    const long stride = (long)get_global_size(0);
    for (long i = get_global_id(0); i < n; i += stride) acc += LOAD1(i, x);
#if IN_INT
    atomic_add(out, acc);
#else
    volatile __global uint* p = (volatile __global uint*)out;
    uint old = *p, seen;
    do {
        seen = old;
        old = atomic_cmpxchg(p, seen, as_uint(as_float(seen) + acc));
    } while (old != seen);
#endif
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void reduce_tree_shared(__global const in_t* restrict x, __global acc_t* out, long n) {
    __local acc_t s[BLOCK];
    const long i = get_global_id(0);
    const acc_t sum = block_tree(i < n ? (acc_t)LOAD1(i, x) : (acc_t)0, s);
    if (get_local_id(0) == 0) out[get_group_id(0)] = sum;
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void reduce_coarsened(__global const in_t* restrict x, __global acc_t* out, long n) {
    __local acc_t s[BLOCK];
    const acc_t sum = block_tree(thread_sum(x, n, get_global_id(0), get_global_size(0)), s);
    if (get_local_id(0) == 0) out[get_group_id(0)] = sum;
}

#if SUBGROUPS == 1
#if defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#elif defined(cl_intel_subgroups)
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#endif
#define SG_SUM(v) sub_group_reduce_add(v)
#define SG_ID() ((int)get_sub_group_id())
#define SG_LANE() ((int)get_sub_group_local_id())
#define SG_COUNT() ((int)get_num_sub_groups())
#define SG_SIZE() ((int)get_sub_group_size())
#elif SUBGROUPS == 2
// NVIDIA: a warp is 32 consecutive work-items of a 1-D group; butterfly shuffles in PTX
#if IN_INT
#define SHFL_T int
#define AS_U(v) as_uint(v)
#define FROM_U(u) as_int(u)
#else
#define SHFL_T float
#define AS_U(v) as_uint(v)
#define FROM_U(u) as_float(u)
#endif
SHFL_T warp_sum_nv(SHFL_T v) {
    for (int off = 16; off > 0; off >>= 1) {
        uint u = AS_U(v), r;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(u), "r"(off));
        v += FROM_U(r);
    }
    return v;
}
#define SG_SUM(v) warp_sum_nv(v)
#define SG_ID() ((int)get_local_id(0) >> 5)
#define SG_LANE() ((int)get_local_id(0) & 31)
#define SG_COUNT() (BLOCK / 32)
#define SG_SIZE() 32
#endif

#if SUBGROUPS
// sub-group sums → local memory (at most BLOCK of them: sub-groups have >= 1 work-item), then
// the first sub-group folds them; deterministic for a given device and sub-group size
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void reduce_subgroup(__global const in_t* restrict x, __global acc_t* out, long n) {
    __local acc_t s[BLOCK];
    acc_t v = SG_SUM(thread_sum(x, n, get_global_id(0), get_global_size(0)));
    const int sg = SG_ID(), nsg = SG_COUNT(), lane = SG_LANE();
    if (lane == 0) s[sg] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (sg == 0) {
        acc_t a = 0;
        for (int i = lane; i < nsg; i += SG_SIZE()) a += s[i];  // sub-group 0 is a full one
        a = SG_SUM(a);
        if (lane == 0) out[get_group_id(0)] = a;
    }
}
#endif
