// attention.cl — O = softmax(Q·Kᵀ·scale)·V per (batch, head); Q, K, V, O row-major [B, H, S, HD]
// (head bh = b·H + h starts at bh·S·HD). Reads Q, K, V and writes O: 4·B·H·S·HD·sizeof(T) bytes at
// the fewest; 4·B·H·S²·HD flops (half causal). Causal: query i sees keys j ≤ i.
//
// Storage DT (define): 0 fp32, 1 fp16 (vload_half / vstore_half_rte: core OpenCL C, no cl_khr_fp16
// needed), 2 bf16 (raw ushort words: as_float(w << 16), stored rounded to nearest even). All math
// is fp32 (no -cl-fast-relaxed-math). Scores are kept in the log2 domain: t = (q·k)·qk_scale with
// qk_scale = log2(e)/√HD, and e^(s − m) = exp2(t − m). "No score yet" is −FLT_MAX, never −inf, so a
// row with every key masked so far gives exp2(−inf − (−FLT_MAX)) = 0, never NaN.
// Defines: DT, HD (64 or 128), CAUSAL (0/1), plus per kernel below.
//
//   attention_scores   naive 1/3: work-group 16×16, work-item (j, i) of head bh0 + group z writes
//                      P[z][i][j] = t (−inf where masked) into the float scratch [nbh][S][S]
//   attention_softmax  naive 2/3: work-group WG per row (group (i, z)): max, Σ exp2, then the row
//                      of P is overwritten with exp2(t − m)/Σ (local-memory trees)
//   attention_pv       naive 3/3: work-group HD per row (group (i, z)), work-item d: O[i][d] =
//                      Σ_j P[i][j]·V[j][d] (V reads coalesced across d)
//   attention_fused_rows  work-group HD per ROWS query rows (group (row block, bh)): the rows' scores
//                      over all SEQ keys in __local memory (ROWS·SEQ floats), work-item t takes keys
//                      t, t+HD, ...; max and Σ by local trees; then work-item d accumulates
//                      Σ_j p_rj·V[j][d] for every row r (one read of K and V per row block)
//   attention_flash    work-group NT = (BM/TM)·(BN/TN) per BM query rows (group (block, bh)); the
//                      Q tile in __local; K/V tiles of BN keys through one __local buffer; work-item
//                      (ty, tx) holds a TM×TN tile of the scores (rows ty + i·BM/TM, keys tx + j·NX)
//                      and TM×DN accumulators (columns tx + j·NX, DN = HD/NX); online softmax per
//                      row: running max m (shared by the row's NX work-items, read from the score
//                      tile in __local), rescale of the accumulators and of the partial sums by
//                      exp2(m_old − m_new); the S×S matrix never leaves the work-group. Causal:
//                      key tiles stop at the block's last row, and the grid is (bh, block) with
//                      the blocks reversed, so the longest query blocks (most keys) of every head
//                      start first and the short ones fill the tail. Rows of __local tiles are
//                      padded by one float (HD + 1) so the work-items of a row read different
//                      banks.

#ifndef DT
#define DT 0
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef WG
#define WG 64
#endif

#include "f16.cl"

#define NEG (-FLT_MAX)

// tree over n (a power of two) work-items in local memory; every work-item gets the result
inline float wg_reduce(float v, int is_max, __local float* scr, int n) {
    const int t = get_local_id(0);
    scr[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = n / 2; s > 0; s >>= 1) {
        if (t < s) scr[t] = is_max ? fmax(scr[t], scr[t + s]) : scr[t] + scr[t + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float r = scr[0];
    barrier(CLK_LOCAL_MEM_FENCE);  // scr is reused
    return r;
}

// ---- naive: three kernels through an S×S scratch ---------------------------------------------

__kernel void attention_scores(__global const T* Q, __global const T* K, __global float* P, int S, int bh0,
                               float qk_scale) {
    const int j = get_global_id(0), i = get_global_id(1), z = get_group_id(2);
    if (i >= S || j >= S) return;
    const size_t head = (size_t)(bh0 + z) * S * HD;
    float acc = 0.f;
    for (int d = 0; d < HD; ++d) acc = fma(ld(Q, head + (size_t)i * HD + d), ld(K, head + (size_t)j * HD + d), acc);
    P[((size_t)z * S + i) * S + j] = (CAUSAL && j > i) ? -INFINITY : acc * qk_scale;
}

__kernel void attention_softmax(__global float* P, int S) {
    __local float scr[WG];
    const int t = get_local_id(0);
    __global float* row = P + ((size_t)get_group_id(1) * S + get_group_id(0)) * S;
    float m = NEG;
    for (int j = t; j < S; j += WG) m = fmax(m, row[j]);
    m = wg_reduce(m, 1, scr, WG);
    float l = 0.f;
    for (int j = t; j < S; j += WG) l += exp2(row[j] - m);
    l = wg_reduce(l, 0, scr, WG);
    const float inv = 1.f / l;
    for (int j = t; j < S; j += WG) row[j] = exp2(row[j] - m) * inv;
}

__kernel void attention_pv(__global const float* P, __global const T* V, __global T* O, int S, int bh0) {
    const int d = get_local_id(0), i = get_group_id(0), z = get_group_id(1);
    const size_t head = (size_t)(bh0 + z) * S * HD;
    __global const float* row = P + ((size_t)z * S + i) * S;
    const int jend = CAUSAL ? i + 1 : S;  // P is 0 past the diagonal: skip the reads
    float acc = 0.f;
    for (int j = 0; j < jend; ++j) acc = fma(row[j], ld(V, head + (size_t)j * HD + d), acc);
    st(O, head + (size_t)i * HD + d, acc);
}

// ---- fused_rows: a block of query rows, all its scores in local memory ----------------------

#ifdef SEQ
__kernel __attribute__((reqd_work_group_size(HD, 1, 1)))
void attention_fused_rows(__global const T* Q, __global const T* K, __global const T* V, __global T* O,
                          int S, float qk_scale) {
    __local float qs[ROWS][HD];
    __local float sc[ROWS][SEQ];
    __local float scr[HD];
    const int t = get_local_id(0), i0 = get_group_id(0) * ROWS;
    const size_t head = (size_t)get_group_id(1) * S * HD;
    for (int r = 0; r < ROWS; ++r) qs[r][t] = i0 + r < S ? ld(Q, head + (size_t)(i0 + r) * HD + t) : 0.f;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int jend = CAUSAL ? min(S, i0 + ROWS) : S;
    for (int j = t; j < jend; j += HD) {  // work-item t: keys t, t + HD, ...; each K row read once
        float acc[ROWS];
        for (int r = 0; r < ROWS; ++r) acc[r] = 0.f;
        for (int d = 0; d < HD; ++d) {
            const float k = ld(K, head + (size_t)j * HD + d);
            for (int r = 0; r < ROWS; ++r) acc[r] = fma(qs[r][d], k, acc[r]);
        }
        for (int r = 0; r < ROWS; ++r) sc[r][j] = (CAUSAL && j > i0 + r) ? -INFINITY : acc[r] * qk_scale;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float inv[ROWS];
    for (int r = 0; r < ROWS; ++r) {
        float m = NEG;
        for (int j = t; j < jend; j += HD) m = fmax(m, sc[r][j]);
        m = wg_reduce(m, 1, scr, HD);
        float l = 0.f;
        for (int j = t; j < jend; j += HD) {
            const float p = exp2(sc[r][j] - m);
            sc[r][j] = p;
            l += p;
        }
        inv[r] = 1.f / wg_reduce(l, 0, scr, HD);  // (its barriers also publish sc)
    }
    float acc[ROWS];
    for (int r = 0; r < ROWS; ++r) acc[r] = 0.f;
    for (int j = 0; j < jend; ++j) {  // work-item t = column d: V row j read once, coalesced
        const float v = ld(V, head + (size_t)j * HD + t);
        for (int r = 0; r < ROWS; ++r) acc[r] = fma(sc[r][j], v, acc[r]);
    }
    for (int r = 0; r < ROWS; ++r)
        if (i0 + r < S) st(O, head + (size_t)(i0 + r) * HD + t, acc[r] * inv[r]);
}
#endif

// ---- flash: tiled over K/V with an online softmax -------------------------------------------

#ifdef BM
#define NX (BN / TN)
#define NY (BM / TM)
#define NT (NX * NY)
#define DN (HD / NX)
#define HP (HD + 1)

__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void attention_flash(__global const T* Q, __global const T* K, __global const T* V, __global T* O, int S,
                     float qk_scale) {
    __local float qs[BM * HP];       // Q tile, later the partial row sums
    __local float kv[BN * HP];       // K tile, then V tile
    __local float ps[BM * (BN + 1)]; // scores, then exp2(t − m)
    const int tid = get_local_id(0), tx = tid % NX, ty = tid / NX;
#if CAUSAL
    const int m0 = (int)(get_num_groups(1) - 1 - get_group_id(1)) * BM;  // longest blocks first
    const size_t head = (size_t)get_group_id(0) * S * HD;
#else
    const int m0 = get_group_id(0) * BM;
    const size_t head = (size_t)get_group_id(1) * S * HD;
#endif
    for (int e = tid; e < BM * HD; e += NT) {  // read Q tile (zeros past S)
        const int r = e / HD, d = e % HD;
        qs[r * HP + d] = m0 + r < S ? ld(Q, head + (size_t)(m0 + r) * HD + d) : 0.f;
    }
    float acc[TM][DN], m[TM], l[TM];
    for (int i = 0; i < TM; ++i) {
        m[i] = NEG;
        l[i] = 0.f;
        for (int j = 0; j < DN; ++j) acc[i][j] = 0.f;
    }
    const int kend = CAUSAL ? min(S, m0 + BM) : S;
    for (int n0 = 0; n0 < kend; n0 += BN) {
        barrier(CLK_LOCAL_MEM_FENCE);  // the last tile's P·V is done with kv and ps
        for (int e = tid; e < BN * HD; e += NT) {  // read K tile
            const int c = e / HD, d = e % HD;
            kv[c * HP + d] = n0 + c < S ? ld(K, head + (size_t)(n0 + c) * HD + d) : 0.f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        float s[TM][TN];
        for (int i = 0; i < TM; ++i)
            for (int j = 0; j < TN; ++j) s[i][j] = 0.f;
        for (int d = 0; d < HD; ++d) {
            float a[TM], b[TN];
            for (int i = 0; i < TM; ++i) a[i] = qs[(ty + i * NY) * HP + d];
            for (int j = 0; j < TN; ++j) b[j] = kv[(tx + j * NX) * HP + d];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) s[i][j] = fma(a[i], b[j], s[i][j]);
        }
        for (int i = 0; i < TM; ++i) {
            const int row = m0 + ty + i * NY;
            for (int j = 0; j < TN; ++j) {
                const int key = n0 + tx + j * NX;
                s[i][j] = (key >= S || (CAUSAL && key > row)) ? -INFINITY : s[i][j] * qk_scale;
                ps[(ty + i * NY) * (BN + 1) + tx + j * NX] = s[i][j];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // scores complete; K no longer read
        for (int e = tid; e < BN * HD; e += NT) {  // read V tile
            const int c = e / HD, d = e % HD;
            kv[c * HP + d] = n0 + c < S ? ld(V, head + (size_t)(n0 + c) * HD + d) : 0.f;
        }
        for (int i = 0; i < TM; ++i) {  // new running max of each row from the score tile
            float rm = NEG;
            for (int c = 0; c < BN; ++c) rm = fmax(rm, ps[(ty + i * NY) * (BN + 1) + c]);
            const float mn = fmax(m[i], rm);
            const float alpha = exp2(m[i] - mn);
            m[i] = mn;
            l[i] *= alpha;
            for (int j = 0; j < DN; ++j) acc[i][j] *= alpha;
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // every row max read before ps is overwritten
        for (int i = 0; i < TM; ++i)
            for (int j = 0; j < TN; ++j) {
                const float p = exp2(s[i][j] - m[i]);
                l[i] += p;
                ps[(ty + i * NY) * (BN + 1) + tx + j * NX] = p;
            }
        barrier(CLK_LOCAL_MEM_FENCE);  // P and the V tile complete
        for (int c = 0; c < BN; ++c) {
            float vv[DN];
            for (int j = 0; j < DN; ++j) vv[j] = kv[c * HP + tx + j * NX];
            for (int i = 0; i < TM; ++i) {
                const float p = ps[(ty + i * NY) * (BN + 1) + c];
                for (int j = 0; j < DN; ++j) acc[i][j] = fma(p, vv[j], acc[i][j]);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // qs is free: the NX partial sums of each row meet there
    for (int i = 0; i < TM; ++i) qs[(ty + i * NY) * HP + tx] = l[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TM; ++i) {
        const int r = ty + i * NY;
        float sum = 0.f;
        for (int x = 0; x < NX; ++x) sum += qs[r * HP + x];
        const float inv = 1.f / sum;
        if (m0 + r < S)
            for (int j = 0; j < DN; ++j) st(O, head + (size_t)(m0 + r) * HD + tx + j * NX, acc[i][j] * inv);
    }
}
#endif
