// softmax.cl — y = exp(x − max) / Σ exp(x − max) along each row of a row-major [M, N] matrix.
// Bytes: M·N·sizeof(T) read + the same written (multi-read variants read x two or three times).
// Flops: ~5·M·N. fp32 math; bf16 rows are raw ushort words, widened with as_float(w << 16) and
// rounded back to nearest even.
//
// Thread → data: a work-group of TPB = TPR·RPB work-items holds RPB rows (TPR work-items per
// row: lane = lid % TPR, row = group·RPB + lid / TPR), or, with G > 1 (split_row), one part of
// one row. A row is cut into "units": a 16-byte vector (4 fp32 / 8 bf16) when VECLOAD (N is a
// multiple of the vector), else one element. Work-item `lane` takes units lane, lane+TPR, ...
// of its row (or part): consecutive work-items read consecutive 16-byte vectors.
//
// Defines: BF16 (0/1), TPR, RPB, VECLOAD (0/1), ITEMS (units per work-item in the register
// tile), FITS (1: the row/part is held in the tile, read once; 0: streamed and re-read), G (parts
// per row; > 1 only in softmax_rows for split_row), PARTS (2: softmax_rows takes x and y as two
// buffers of whole rows each, for arrays above the device's one-buffer limit), SUBGROUPS (0:
// local-memory trees; 1: sub_group_reduce_max/add from cl_khr_subgroups / cl_intel_subgroups;
// 2: NVIDIA warp shuffles in inline PTX). exp is exp2((x − m)·log2 e): x − m is exact near the maximum (Sterbenz), so the
// argument's rounding error scales with x − m, not with |m| (rows shifted by ±1e4 stay exact).
// "No value yet" is −FLT_MAX, never −inf, so −inf − max never meets −inf − (−inf) = NaN.
//
//   softmax_three_pass  one row per TPR work-items: a max loop, a Σ exp loop and a write loop,
//                       each reading the row again (three reads)
//   softmax_rows        FITS: the row (part) is loaded into the register tile once, its max and
//                       Σ exp are reduced over the row's work-items, y is written from the tile
//                       (one read). !FITS: one streaming loop keeps a running max and a
//                       rescaled running sum per work-item (online), the pairs are combined, a
//                       second loop re-reads x and writes y (two reads). fused_row: FITS where
//                       the row fits; online: !FITS always.
//                       G > 1 (split_row): work-groups take tickets in start order (atomic
//                       counter), ticket t → row t / G, part t % G; each publishes its part's
//                       (max, Σ) as two 64-bit words (epoch << 32 | bits) with atom_xchg, waits
//                       for the G − 1 siblings' words of this launch's epoch (volatile loads),
//                       combines them in part order (the same in every part: deterministic)
//                       and writes its part. The wait is bounded: a sibling whose words have not
//                       come after SPIN polls is computed here instead (the whole work-group
//                       reads that part of x and reduces it exactly as its own work-group does:
//                       same work-item per unit, same order, so the same bits), so no
//                       work-group depends on another being resident. OpenCL promises no
//                       co-residency, and compute units are no bound on it (Intel counts EUs;
//                       other work may hold the device); the factory still keeps G ≤ compute
//                       units, so that on GPUs the siblings normally run together and the
//                       fallback costs nothing but the poll counter.

#ifndef BF16
#define BF16 0
#endif
#ifndef SUBGROUPS
#define SUBGROUPS 0
#endif
#ifndef G
#define G 1
#endif
#ifndef PARTS
#define PARTS 1  // 2: softmax_rows takes x and y as two row parts each (x, x1; y, y1; rows0)
#endif
// EXP2: exp2 (the default) or native_exp2 (the device's fast approximation)
#ifndef EXP2
#define EXP2 exp2
#endif
#define TPB (TPR * RPB)

#if G > 1
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#ifndef SPIN
#define SPIN 16384  // polls of a sibling's words (split_row) before its part is computed here
#endif

#if BF16
typedef ushort T;
#define VEC 8
#else
typedef float T;
#define VEC 4
#endif
#if VECLOAD
#define UNIT VEC
#else
#define UNIT 1
#endif

#define LOG2E 1.4426950408889634f
#define NEG (-FLT_MAX)

float bf16_to_f(uint w) { return as_float(w << 16); }
uint f_to_bf16(float f) {  // round to nearest, ties to even (outputs are finite)
    const uint u = as_uint(f);
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// unit u of a row (units [0, uend) exist): UNIT values, −inf past the end
void load_unit(__global const T* row, long u, long uend, float* v) {
    if (u >= uend) {
        for (int j = 0; j < UNIT; ++j) v[j] = -INFINITY;
        return;
    }
#if VECLOAD && BF16
    const uint4 w = ((__global const uint4*)row)[u];
    v[0] = bf16_to_f(w.x & 0xFFFFu); v[1] = as_float(w.x & 0xFFFF0000u);
    v[2] = bf16_to_f(w.y & 0xFFFFu); v[3] = as_float(w.y & 0xFFFF0000u);
    v[4] = bf16_to_f(w.z & 0xFFFFu); v[5] = as_float(w.z & 0xFFFF0000u);
    v[6] = bf16_to_f(w.w & 0xFFFFu); v[7] = as_float(w.w & 0xFFFF0000u);
#elif VECLOAD
    const float4 f = ((__global const float4*)row)[u];
    v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
#elif BF16
    v[0] = bf16_to_f(row[u]);
#else
    v[0] = row[u];
#endif
}

// y for unit u from its x values: exp2((x − m)·log2 e) · inv
void store_unit(__global T* row, long u, const float* v, float m, float inv) {
    float e[UNIT];
    for (int j = 0; j < UNIT; ++j) e[j] = EXP2((v[j] - m) * LOG2E) * inv;
#if VECLOAD && BF16
    ((__global uint4*)row)[u] = (uint4)(f_to_bf16(e[0]) | (f_to_bf16(e[1]) << 16),
                                        f_to_bf16(e[2]) | (f_to_bf16(e[3]) << 16),
                                        f_to_bf16(e[4]) | (f_to_bf16(e[5]) << 16),
                                        f_to_bf16(e[6]) | (f_to_bf16(e[7]) << 16));
#elif VECLOAD
    ((__global float4*)row)[u] = (float4)(e[0], e[1], e[2], e[3]);
#elif BF16
    row[u] = (ushort)f_to_bf16(e[0]);
#else
    row[u] = e[0];
#endif
}

// ---- reductions over the TPR work-items of a row (every work-item gets the result) ----------

#define OP_MAX 0
#define OP_SUM 1
#define APPLY(op, a, b) ((op) == OP_MAX ? fmax((a), (b)) : (a) + (b))

// a tree in local memory (scr: TPB floats); barriers: call from every work-item of the group
float tree_reduce(float v, int op, __local float* scr) {
    const int lid = get_local_id(0), lane = lid % TPR;
    scr[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = TPR / 2; s > 0; s >>= 1) {
        if (lane < s) scr[lid] = APPLY(op, scr[lid], scr[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);  // level k+1 reads what level k wrote
    }
    const float r = scr[lid - lane];
    barrier(CLK_LOCAL_MEM_FENCE);  // scr is reused by the next reduction
    return r;
}

#if SUBGROUPS == 1
#if defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#elif defined(cl_intel_subgroups)
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#endif
float row_reduce(float v, int op, __local float* scr) {
    const int sg = (int)get_max_sub_group_size();
    if (TPR < sg || TPR % sg) return tree_reduce(v, op, scr);  // uniform: sub-groups straddle rows
    v = op == OP_MAX ? sub_group_reduce_max(v) : sub_group_reduce_add(v);
    if (TPR == sg) return v;
    const int lid = get_local_id(0), lane = lid % TPR, nsg = TPR / sg;
    if (get_sub_group_local_id() == 0) scr[lid / sg] = v;  // sub-groups: consecutive lids
    barrier(CLK_LOCAL_MEM_FENCE);
    float r = scr[(lid - lane) / sg];
    for (int k = 1; k < nsg; ++k) r = APPLY(op, r, scr[(lid - lane) / sg + k]);
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#elif SUBGROUPS == 2
// NVIDIA: a warp is 32 consecutive work-items; butterflies below TPR stay inside a row
float warp_reduce(float v, int op) {
    for (int off = (TPR < 32 ? TPR : 32) / 2; off > 0; off >>= 1) {
        uint r;
        asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(as_uint(v)), "r"(off));
        v = APPLY(op, v, as_float(r));
    }
    return v;
}
float row_reduce(float v, int op, __local float* scr) {
    v = warp_reduce(v, op);
    if (TPR <= 32) return v;
    const int lid = get_local_id(0), lane = lid % TPR;
    if ((lid & 31) == 0) scr[lid >> 5] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    float r = scr[(lid - lane) >> 5];
    for (int k = 1; k < TPR / 32; ++k) r = APPLY(op, r, scr[((lid - lane) >> 5) + k]);
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
#else
float row_reduce(float v, int op, __local float* scr) { return tree_reduce(v, op, scr); }
#endif

// running (max, Σ) update with one value: one exp2 per value (the rescale only on a new max)
void online_add(float xv, float* m, float* s) {
    if (xv > *m) {
        *s = *s * EXP2((*m - xv) * LOG2E) + 1.0f;
        *m = xv;
    } else {
        *s += EXP2((xv - *m) * LOG2E);
    }
}

// ---- kernels -----------------------------------------------------------------------------

__kernel __attribute__((reqd_work_group_size(TPB, 1, 1)))
void softmax_three_pass(__global const T* restrict x, __global T* restrict y, int M, int N) {
    __local float scr[TPB];
    const int lid = get_local_id(0), lane = lid % TPR;
    const long row = (long)get_group_id(0) * RPB + lid / TPR;
    const long uend = row < M ? N / UNIT : 0;
    __global const T* xr = x + row * N;
    float v[UNIT];
    float m = NEG;
    for (long u = lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, v);
        for (int j = 0; j < UNIT; ++j) m = fmax(m, v[j]);
    }
    m = row_reduce(m, OP_MAX, scr);
    float s = 0.0f;
    for (long u = lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, v);
        for (int j = 0; j < UNIT; ++j) s += EXP2((v[j] - m) * LOG2E);
    }
    s = row_reduce(s, OP_SUM, scr);
    const float inv = 1.0f / s;
    for (long u = lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, v);
        store_unit(y + row * N, u, v, m, inv);
    }
}

// (max, Σ exp) of units [u0, uend) of row xr, over the TPR work-items of a row: FITS, as the
// register tile computes it (unit u0 + k·TPR + lane, k = 0 .. ITEMS − 1, max first, then Σ in the
// same order), read twice from memory instead of held; else the online stream
void part_stats(__global const T* xr, long u0, long uend, int lane, __local float* scr, float* pm,
                float* ps) {
    float w[UNIT], m = NEG, s = 0.0f;
#if FITS
    for (int k = 0; k < ITEMS; ++k) {
        load_unit(xr, u0 + k * TPR + lane, uend, w);
        for (int j = 0; j < UNIT; ++j) m = fmax(m, w[j]);
    }
    m = row_reduce(m, OP_MAX, scr);
    for (int k = 0; k < ITEMS; ++k) {
        load_unit(xr, u0 + k * TPR + lane, uend, w);
        for (int j = 0; j < UNIT; ++j) s += EXP2((w[j] - m) * LOG2E);
    }
    s = row_reduce(s, OP_SUM, scr);
#else
    for (long u = u0 + lane; u < uend; u += TPR) {
        load_unit(xr, u, uend, w);
        for (int j = 0; j < UNIT; ++j) online_add(w[j], &m, &s);
    }
    const float mr = row_reduce(m, OP_MAX, scr);
    s = row_reduce(s * EXP2((m - mr) * LOG2E), OP_SUM, scr);  // m = NEG (nothing seen): s = 0
    m = mr;
#endif
    *pm = m;
    *ps = s;
}

#if G > 1
// 64-bit word: epoch in the high half, a float's bits in the low half
ulong tag(uint epoch, float f) { return ((ulong)epoch << 32) | as_uint(f); }
#endif

// chunk: units per part (G > 1; with G == 1 the whole row); epoch: 1, 2, ... per launch
__kernel __attribute__((reqd_work_group_size(TPB, 1, 1)))
void softmax_rows(__global const T* restrict x, __global T* restrict y, int M, int N, int chunk,
                  volatile __global ulong* slots, volatile __global uint* ticket, uint epoch
#if PARTS > 1
                  , __global const T* restrict x1, __global T* restrict y1, int rows0
#endif
                  ) {
    __local float scr[TPB];
    const int lid = get_local_id(0), lane = lid % TPR;
#if G > 1
    __local uint tk;
    if (lid == 0) tk = atomic_inc(ticket) - (epoch - 1u) * (uint)(M * G);  // launch e: [(e-1)·MG, e·MG)
    barrier(CLK_LOCAL_MEM_FENCE);
    const long row = tk / G;
    const int part = tk % G;
#else
    const long row = (long)get_group_id(0) * RPB + lid / TPR;
    const int part = 0;
#endif
    const long nu = row < M ? N / UNIT : 0;
    const long u0 = (long)part * chunk;
    const long uend = min(nu, u0 + chunk);
#if PARTS > 1  // rows [0, rows0) in x, y; the rest in x1, y1 (arrays above the one-buffer limit)
    __global const T* xr = row < rows0 ? x + row * N : x1 + (row - rows0) * N;
    __global T* yr = row < rows0 ? y + row * N : y1 + (row - rows0) * N;
#else
    __global const T* xr = x + row * N;
    __global T* yr = y + row * N;
#endif
    float m = NEG, s = 0.0f;
#if FITS
    float v[ITEMS][UNIT];
    for (int k = 0; k < ITEMS; ++k) load_unit(xr, u0 + k * TPR + lane, uend, v[k]);
    for (int k = 0; k < ITEMS; ++k)
        for (int j = 0; j < UNIT; ++j) m = fmax(m, v[k][j]);
    m = row_reduce(m, OP_MAX, scr);
    for (int k = 0; k < ITEMS; ++k)
        for (int j = 0; j < UNIT; ++j) s += EXP2((v[k][j] - m) * LOG2E);
    s = row_reduce(s, OP_SUM, scr);
#else
    part_stats(xr, u0, uend, lane, scr, &m, &s);
#endif
#if G > 1
    // publish this part, gather every part of the row (lane k < G waits for part k, SPIN polls
    // at most; a part that did not come is computed here, by the whole work-group)
    __local float st2[2 * G];
    __local int late[G];
    if (lid == 0) {
        atom_xchg(slots + 2 * (row * G + part), tag(epoch, m));
        atom_xchg(slots + 2 * (row * G + part) + 1, tag(epoch, s));
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // (work-items that run one after another publish first)
    if (lid < G) {
        ulong a, b;
        int polls = 0;
        do {
            a = slots[2 * (row * G + lid)];
            b = slots[2 * (row * G + lid) + 1];
        } while (((uint)(a >> 32) != epoch || (uint)(b >> 32) != epoch) && ++polls < SPIN);
        late[lid] = (uint)(a >> 32) != epoch || (uint)(b >> 32) != epoch;
        st2[2 * lid] = as_float((uint)a);
        st2[2 * lid + 1] = as_float((uint)b);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < G; ++k) {
        if (late[k]) {  // the same value in every work-item (local memory after a barrier)
            float mk, sk;
            part_stats(xr, (long)k * chunk, min(nu, (long)k * chunk + chunk), lane, scr, &mk, &sk);
            if (lid == 0) {
                st2[2 * k] = mk;
                st2[2 * k + 1] = sk;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float mt = st2[0];
    for (int k = 1; k < G; ++k) mt = fmax(mt, st2[2 * k]);
    float st = 0.0f;
    for (int k = 0; k < G; ++k) st += st2[2 * k + 1] * EXP2((st2[2 * k] - mt) * LOG2E);
    m = mt;
    s = st;
#endif
    const float inv = 1.0f / s;
#if FITS
    for (int k = 0; k < ITEMS; ++k) {
        const long u = u0 + k * TPR + lane;
        if (u < uend) store_unit(yr, u, v[k], m, inv);
    }
#else
    {
        float w[UNIT];
        for (long u = u0 + lane; u < uend; u += TPR) {
            load_unit(xr, u, uend, w);
            store_unit(yr, u, w, m, inv);
        }
    }
#endif
}
