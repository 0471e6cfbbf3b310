// read_ceiling.cu's plain-load forms in OpenCL C (scripts/read_ceiling.py --backend opencl): how
// fast can one OpenCL kernel read ~100–300 MB through a vendor's OpenCL, timed by the harness's
// OpenCL sample (the commands' own events)? Every kernel XORs all the 32-bit words it reads into
// *out (a local-memory XOR tree per work-group, then one atomic_xor), and the script checks that
// value against the host's, so a form that skips data fails.
//
//   rd_empty  one work-item, no reads: the timed window's fixed cost
//   rd_lmem   a full grid with LMEM bytes of static local memory per work-group, no reads
//   rd_ldg    grid-stride 16-byte loads, U of them in flight per work-item before any is used;
//             CHUNK 1: each work-group reads one contiguous chunk instead of the grid-wide stride
// Defines: BLOCK (work-group size, a power of two), U, CHUNK, LMEM.
#ifndef U
#define U 4
#endif
#ifndef CHUNK
#define CHUNK 0
#endif

inline uint fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

inline void publish(uint acc, __local uint* tree, __global uint* out) {
    const int t = get_local_id(0);
    tree[t] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = BLOCK / 2; h > 0; h >>= 1) {
        if (t < h) tree[t] ^= tree[t + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) atomic_xor(out, tree[0]);
}

__kernel void rd_empty(__global const uint4* restrict a, long n16, __global uint* out) {
    if (get_global_id(0) == 0 && n16 < 0) *out = fold(a[0]);
}

#ifndef LMEM
#define LMEM 16
#endif
__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void rd_lmem(__global const uint4* restrict a, long n16, __global uint* out) {
    __local uint4 pad[LMEM / 16];
    const int t = get_local_id(0);
    if (n16 < 0) {
        pad[t % (LMEM / 16)] = a[t];
        barrier(CLK_LOCAL_MEM_FENCE);
        *out = fold(pad[(t + 1) % (LMEM / 16)]);
    }
}

__kernel __attribute__((reqd_work_group_size(BLOCK, 1, 1)))
void rd_ldg(__global const uint4* restrict a, long n16, __global uint* out) {
    __local uint tree[BLOCK];
#if CHUNK
    const long per = (n16 + get_num_groups(0) - 1) / get_num_groups(0);
    const long lo = (long)get_group_id(0) * per, hi = min(n16, lo + per);
    long i = lo + get_local_id(0);
    const long stride = BLOCK;
#else
    const long hi = n16;
    long i = get_global_id(0);
    const long stride = (long)get_global_size(0);
#endif
    uint acc = 0;
    for (; i + (U - 1) * stride < hi; i += U * stride) {
        uint4 v[U];
        for (int u = 0; u < U; ++u) v[u] = a[i + u * stride];
        for (int u = 0; u < U; ++u) acc ^= fold(v[u]);
    }
    for (; i < hi; i += stride) acc ^= fold(a[i]);
    publish(acc, tree, out);
}
