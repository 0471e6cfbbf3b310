// tc_pairs.h — the tensor-core GEMV's per-lane step, shared by gemv_lowbit.cu (gemv_lowbit_tc,
// gemv_lowbit_tma, gemv_lowbit_pk) and gemv_lowbit.cl (gemv_lowbit_mma, NVIDIA only): the exact
// magic-exponent unpack of packed weights into f16x2/bf16x2 pairs and mma.sync m16n8k16 with fp32
// accumulators, through inline PTX (the fragment layout, the k permutation and the unpack's
// arithmetic are explained at gemv_lowbit_tc in gemv_lowbit.cu). Needs BITS (4, 8) and DT (1 fp16,
// 2 bf16); MEMONLY 1 (CUDA probes) keeps only the loads alive. Included once per source, where
// those are defined; CUDA gets __device__ functions and __byte_perm, OpenCL C inline functions
// and prmt through asm.

#ifdef __OPENCL_VERSION__
#define TC_FN inline
typedef uint u32;
inline u32 tc_perm(u32 a, u32 b, u32 s) {
    u32 d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(s));
    return d;
}
#define TC_ASF(u) as_float(u)
#else
#define TC_FN __device__ __forceinline__
#define tc_perm(a, b, s) __byte_perm(a, b, s)
#define TC_ASF(u) __uint_as_float(u)
#endif

#define TC_VPL (128 / BITS)    // values per 16-byte load: 32 int4 or 16 int8
#define TC_STEPK (4 * TC_VPL)  // k per step: 128 (w4: one scale group) or 64 (w8)
#define TC_XU (TC_VPL / 8)     // 16-byte pieces of x per lane and step: 4 (w4) or 2 (w8)

TC_FN u32 h2fma(u32 a, u32 b, u32 c) {  // a·b + c on two halves (exact here)
    u32 d;
#if DT == 2
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
#else
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
#endif
    return d;
}

// d += A·B, A 16×16 (a0..a3), B 16×8 (b0, b1), fp32 accumulators d[0..3]
TC_FN void mma16816(float* d, u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
#if DT == 2
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

#if BITS == 4
// int4 word (k = e0..e7): p = (e0,e2), (e1,e3), (e4,e6), (e5,e7) as exact f16x2/bf16x2 q values
TC_FN void unpack_pairs(u32 w, u32* p) {
#if DT == 2
    const u32 lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu, m = 0x43434343u;
    const u32 one = 0x3F803F80u, sub = 0xC308C308u;  // bf16x2 1.0, −136
    p[0] = h2fma(tc_perm(lo, m, 0x4140u), one, sub);
    p[1] = h2fma(tc_perm(hi, m, 0x4140u), one, sub);
    p[2] = h2fma(tc_perm(lo, m, 0x4342u), one, sub);
    p[3] = h2fma(tc_perm(hi, m, 0x4342u), one, sub);
#else
    const u32 lo = w & 0x0F0F0F0Fu, hi = w & 0xF0F0F0F0u, m = 0x64646464u;
    const u32 one = 0x3C003C00u, sub = 0xE408E408u;    // f16x2 1.0, −1032
    const u32 inv16 = 0x2C002C00u, off = 0xD480D480u;  // f16x2 1/16, −72
    p[0] = h2fma(tc_perm(lo, m, 0x4140u), one, sub);
    p[1] = h2fma(tc_perm(hi, m, 0x4140u), inv16, off);
    p[2] = h2fma(tc_perm(lo, m, 0x4342u), one, sub);
    p[3] = h2fma(tc_perm(hi, m, 0x4342u), inv16, off);
#endif
}
#else
// int8 word (k = e0..e3): p = (e0,e2), (e1,e3) as exact f16x2/bf16x2 q values
TC_FN void unpack_pairs(u32 w, u32* p) {
    const u32 u = w ^ 0x80808080u;  // q + 128 per byte
#if DT == 2  // through fp32 (an integer-op unpack, two LOP3 + one HFMA2 per pair, measured slower):
             // 2^23 + u − (2^23 + 128) = q exactly, two floats → one bf16x2 (exact: |q| ≤ 128)
    float f[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) f[e] = TC_ASF(tc_perm(u, 0x4B000000u, 0x7440u + e)) - 8388736.0f;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p[0]) : "f"(f[2]), "f"(f[0]));
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(p[1]) : "f"(f[3]), "f"(f[1]));
#else
    const u32 one = 0x3C003C00u, sub = 0xE480E480u;  // f16x2 1.0, −1152
    p[0] = h2fma(tc_perm(u, 0x64646464u, 0x4240u), one, sub);
    p[1] = h2fma(tc_perm(u, 0x64646464u, 0x4341u), one, sub);
#endif
}
#endif

// one step: 16 bytes of rows g (va) and g+8 (vb); xv = the lane's TC_VPL x values of this step
// (TC_XU 16-byte pieces). Every 4 consecutive k (x words X0 = (x0,x1), X1 = (x2,x3)) feed one mma
// with pairs (e0,e2), (e1,e3).
TC_FN void tc_step(float* d, const uint4 va, const uint4 vb, const uint4* xv) {
#if MEMONLY
    const u32 h = (va.x ^ va.y ^ va.z) ^ (va.w ^ vb.x ^ vb.y) ^ (vb.z ^ vb.w ^ xv[0].x);
    d[0] += TC_ASF(h & 0x007FFFFFu);
    return;
#endif
    const u32 wa[4] = {va.x, va.y, va.z, va.w}, wb[4] = {vb.x, vb.y, vb.z, vb.w};
#if BITS == 4
    float e[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#endif
#pragma unroll
    for (int h = 0; h < TC_XU; ++h) {  // x piece h: k = 8h + 0..7
        const u32 xw[4] = {xv[h].x, xv[h].y, xv[h].z, xv[h].w};
#pragma unroll
        for (int j = 0; j < 2; ++j) {  // k = 8h + 4j + 0..3: x words xw[2j], xw[2j+1]
            const u32 b0 = tc_perm(xw[2 * j], xw[2 * j + 1], 0x5410u);  // (x0, x2)
            const u32 b1 = tc_perm(xw[2 * j], xw[2 * j + 1], 0x7632u);  // (x1, x3)
#if BITS == 4
            // int4: word h holds k = 8h + 0..7; pairs 0, 1 are its k 0..3, pairs 2, 3 its k 4..7
            u32 pa[4], pb[4];
            unpack_pairs(wa[h], pa);
            unpack_pairs(wb[h], pb);
            if (j == 0)  // two accumulator chains (k 0..3 and 4..7 of each word): half the mma latency
                mma16816(d, pa[0], pb[0], pa[1], pb[1], b0, b1);
            else
                mma16816(e, pa[2], pb[2], pa[3], pb[3], b0, b1);
#else
            // int8: word 2h + j holds k = 8h + 4j + 0..3
            u32 pa[2], pb[2];
            unpack_pairs(wa[2 * h + j], pa);
            unpack_pairs(wb[2 * h + j], pb);
            mma16816(d, pa[0], pb[0], pa[1], pb[1], b0, b1);
#endif
        }
    }
#if BITS == 4
#pragma unroll
    for (int i = 0; i < 4; ++i) d[i] += e[i];
#endif
}
