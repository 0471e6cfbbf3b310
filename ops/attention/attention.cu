// attention.cu — O = softmax(Q·Kᵀ·scale)·V per (batch, head); Q, K, V, O row-major [B, H, S, HD]
// (head bh starts at bh·S·HD). Reads Q, K, V and writes O: 4·B·H·S·HD·sizeof(T) bytes at the
// fewest; 4·B·H·S²·HD flops (half causal). Causal: query i sees keys j ≤ i.
//
// Storage DT (define): 0 fp32, 1 fp16, 2 bf16 (16-bit values travel as raw unsigned short words).
// Scores in the log2 domain: t = (q·k)·qk_scale, qk_scale = log2(e)/√HD, weights exp2(t − m).
// "No score yet" is −FLT_MAX, never −inf (no −inf − (−inf) = NaN). Defines: DT, HD (64/128),
// CAUSAL (0/1), plus per kernel below.
//
// SIMT kernels (the algorithms of attention.cl, same entry names and launch geometry):
//   attention_scores / attention_softmax / attention_pv   naive: S×S fp32 scratch per head
//   attention_fused_rows   block of HD threads per ROWS query rows, the rows' S scores in dynamic
//                          shared memory (ROWS·S floats, opted in above 48 KiB by the launcher)
//   attention_flash        BM query rows per block of NT = (BM/TM)·(BN/TN) threads, K/V tiles of BN
//                          keys in shared memory, TM×TN score tiles, online softmax (fp32 math)
//
// Tensor cores, fp16/bf16 (FlashAttention-2's layout):
//   attention_flash_mma    block = MWARPS warps (4 or 8) = BM 16·MWARPS query rows (16 per warp),
//                          K/V tiles of MBN = 64 or 128 keys; grid (⌈S/BM⌉, B·H), causal blocks
//                          longest first; dynamic shared memory (BM + 4·MBN)·HD·2 bytes.
//                          Q is staged once through shared memory into
//                          A fragments (registers, HD/16 k-steps); per key tile S = Q·Kᵀ by
//                          mma.sync.m16n8k16 (fp32 accumulators, K fragments by ldmatrix from the
//                          row-major tile), online softmax on the accumulator fragments (each row
//                          is held by a quad of lanes: max and sum by two xor-shuffles), P rounded
//                          to fp16/bf16 and re-used in registers as the A operand of P·V (the m16n8
//                          C layout of two adjacent n-tiles is the m16k16 A layout), V fragments by
//                          ldmatrix.trans. K/V tiles double-buffered by cp.async (16-byte copies,
//                          zero-filled past S), tiles XOR-swizzled (chunk c of row r at c ^ (r & 7))
//                          so ldmatrix is conflict-free. Causal: tiles stop at the block's last row
//                          and only tiles that reach the diagonal (or S) apply a mask. Dynamic
//                          shared memory: (64 + 2·2·64)·HD·2 bytes (80 KiB at HD = 128).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef DT
#define DT 0
#endif
#ifndef HD
#define HD 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef WG
#define WG 64
#endif

typedef unsigned short u16;
#if DT == 0
typedef float T;
#else
typedef u16 T;
#endif

#define NEG (-3.402823466e38f)
#define NEG_INF (-__int_as_float(0x7f800000))

__device__ __forceinline__ float ld(const T* p, size_t i) {
#if DT == 0
    return p[i];
#elif DT == 1
    return __half2float(__ushort_as_half(p[i]));
#else
    return __uint_as_float((unsigned)p[i] << 16);
#endif
}

__device__ __forceinline__ void st(T* p, size_t i, float v) {
#if DT == 0
    p[i] = v;
#elif DT == 1
    p[i] = __half_as_ushort(__float2half_rn(v));
#else
    p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
#endif
}

// tree over n (a power of two) threads in shared memory; every thread gets the result
__device__ float block_reduce(float v, bool is_max, float* scr, int n) {
    const int t = threadIdx.x;
    scr[t] = v;
    __syncthreads();
    for (int s = n / 2; s > 0; s >>= 1) {
        if (t < s) scr[t] = is_max ? fmaxf(scr[t], scr[t + s]) : scr[t] + scr[t + s];
        __syncthreads();
    }
    const float r = scr[0];
    __syncthreads();
    return r;
}

// ---- naive ----------------------------------------------------------------------------------

extern "C" __global__ void attention_scores(const T* __restrict__ Q, const T* __restrict__ K, float* __restrict__ P,
                                            int S, int bh0, float qk_scale) {
    const int j = blockIdx.x * 16 + threadIdx.x, i = blockIdx.y * 16 + threadIdx.y, z = blockIdx.z;
    if (i >= S || j >= S) return;
    const size_t head = (size_t)(bh0 + z) * S * HD;
    float acc = 0.f;
    for (int d = 0; d < HD; ++d) acc = fmaf(ld(Q, head + (size_t)i * HD + d), ld(K, head + (size_t)j * HD + d), acc);
    P[((size_t)z * S + i) * S + j] = (CAUSAL && j > i) ? NEG_INF : acc * qk_scale;
}

extern "C" __global__ void attention_softmax(float* __restrict__ P, int S) {
    __shared__ float scr[WG];
    const int t = threadIdx.x;
    float* row = P + ((size_t)blockIdx.y * S + blockIdx.x) * S;
    float m = NEG;
    for (int j = t; j < S; j += WG) m = fmaxf(m, row[j]);
    m = block_reduce(m, true, scr, WG);
    float l = 0.f;
    for (int j = t; j < S; j += WG) l += exp2f(row[j] - m);
    l = block_reduce(l, false, scr, WG);
    const float inv = 1.f / l;
    for (int j = t; j < S; j += WG) row[j] = exp2f(row[j] - m) * inv;
}

extern "C" __global__ void attention_pv(const float* __restrict__ P, const T* __restrict__ V, T* __restrict__ O,
                                        int S, int bh0) {
    const int d = threadIdx.x, i = blockIdx.x, z = blockIdx.y;
    const size_t head = (size_t)(bh0 + z) * S * HD;
    const float* row = P + ((size_t)z * S + i) * S;
    const int jend = CAUSAL ? i + 1 : S;  // P is 0 past the diagonal
    float acc = 0.f;
    for (int j = 0; j < jend; ++j) acc = fmaf(row[j], ld(V, head + (size_t)j * HD + d), acc);
    st(O, head + (size_t)i * HD + d, acc);
}

// ---- fused_rows -----------------------------------------------------------------------------

#ifdef ROWS
extern "C" __global__ void __launch_bounds__(HD)
attention_fused_rows(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V, T* __restrict__ O,
                     int S, float qk_scale) {
    __shared__ float qs[ROWS][HD];
    __shared__ float scr[HD];
    extern __shared__ float sc[];  // [ROWS][S]
    const int t = threadIdx.x, i0 = blockIdx.x * ROWS;
    const size_t head = (size_t)blockIdx.y * S * HD;
    for (int r = 0; r < ROWS; ++r) qs[r][t] = i0 + r < S ? ld(Q, head + (size_t)(i0 + r) * HD + t) : 0.f;
    __syncthreads();
    const int jend = CAUSAL ? min(S, i0 + ROWS) : S;
    for (int j = t; j < jend; j += HD) {  // thread t: keys t, t + HD, ...
        float acc[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r] = 0.f;
        for (int d = 0; d < HD; ++d) {
            const float k = ld(K, head + (size_t)j * HD + d);
#pragma unroll
            for (int r = 0; r < ROWS; ++r) acc[r] = fmaf(qs[r][d], k, acc[r]);
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sc[r * S + j] = (CAUSAL && j > i0 + r) ? NEG_INF : acc[r] * qk_scale;
    }
    __syncthreads();
    float inv[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
        float m = NEG;
        for (int j = t; j < jend; j += HD) m = fmaxf(m, sc[r * S + j]);
        m = block_reduce(m, true, scr, HD);
        float l = 0.f;
        for (int j = t; j < jend; j += HD) {
            const float p = exp2f(sc[r * S + j] - m);
            sc[r * S + j] = p;
            l += p;
        }
        inv[r] = 1.f / block_reduce(l, false, scr, HD);  // (its barriers also publish sc)
    }
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[r] = 0.f;
    for (int j = 0; j < jend; ++j) {  // thread t = column d: V row j read once, coalesced
        const float v = ld(V, head + (size_t)j * HD + t);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r] = fmaf(sc[r * S + j], v, acc[r]);
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
        if (i0 + r < S) st(O, head + (size_t)(i0 + r) * HD + t, acc[r] * inv[r]);
}
#endif

// ---- flash, SIMT ----------------------------------------------------------------------------

#ifdef BM
#define NX (BN / TN)
#define NY (BM / TM)
#define NT (NX * NY)
#define DN (HD / NX)
#define HP (HD + 1)

extern "C" __global__ void __launch_bounds__(NT)
attention_flash(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V, T* __restrict__ O, int S,
                float qk_scale) {
    __shared__ float qs[BM * HP];        // Q tile, later the partial row sums
    __shared__ float kv[BN * HP];        // K tile, then V tile
    __shared__ float ps[BM * (BN + 1)];  // scores, then exp2(t − m)
    const int tid = threadIdx.x, tx = tid % NX, ty = tid / NX;
    const int m0 = blockIdx.x * BM;
    const size_t head = (size_t)blockIdx.y * S * HD;
    for (int e = tid; e < BM * HD; e += NT) {
        const int r = e / HD, d = e % HD;
        qs[r * HP + d] = m0 + r < S ? ld(Q, head + (size_t)(m0 + r) * HD + d) : 0.f;
    }
    float acc[TM][DN], m[TM], l[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        m[i] = NEG;
        l[i] = 0.f;
#pragma unroll
        for (int j = 0; j < DN; ++j) acc[i][j] = 0.f;
    }
    const int kend = CAUSAL ? min(S, m0 + BM) : S;
    for (int n0 = 0; n0 < kend; n0 += BN) {
        __syncthreads();  // the last tile's P·V is done with kv and ps
        for (int e = tid; e < BN * HD; e += NT) {
            const int c = e / HD, d = e % HD;
            kv[c * HP + d] = n0 + c < S ? ld(K, head + (size_t)(n0 + c) * HD + d) : 0.f;
        }
        __syncthreads();
        float s[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) s[i][j] = 0.f;
        for (int d = 0; d < HD; ++d) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = qs[(ty + i * NY) * HP + d];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = kv[(tx + j * NX) * HP + d];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) s[i][j] = fmaf(a[i], b[j], s[i][j]);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = m0 + ty + i * NY;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int key = n0 + tx + j * NX;
                s[i][j] = (key >= S || (CAUSAL && key > row)) ? NEG_INF : s[i][j] * qk_scale;
                ps[(ty + i * NY) * (BN + 1) + tx + j * NX] = s[i][j];
            }
        }
        __syncthreads();  // scores complete; K no longer read
        for (int e = tid; e < BN * HD; e += NT) {
            const int c = e / HD, d = e % HD;
            kv[c * HP + d] = n0 + c < S ? ld(V, head + (size_t)(n0 + c) * HD + d) : 0.f;
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            float rm = NEG;
            for (int c = 0; c < BN; ++c) rm = fmaxf(rm, ps[(ty + i * NY) * (BN + 1) + c]);
            const float mn = fmaxf(m[i], rm), alpha = exp2f(m[i] - mn);
            m[i] = mn;
            l[i] *= alpha;
#pragma unroll
            for (int j = 0; j < DN; ++j) acc[i][j] *= alpha;
        }
        __syncthreads();  // every row max read before ps is overwritten
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const float p = exp2f(s[i][j] - m[i]);
                l[i] += p;
                ps[(ty + i * NY) * (BN + 1) + tx + j * NX] = p;
            }
        __syncthreads();  // P and the V tile complete
        for (int c = 0; c < BN; ++c) {
            float vv[DN];
#pragma unroll
            for (int j = 0; j < DN; ++j) vv[j] = kv[c * HP + tx + j * NX];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const float p = ps[(ty + i * NY) * (BN + 1) + c];
#pragma unroll
                for (int j = 0; j < DN; ++j) acc[i][j] = fmaf(p, vv[j], acc[i][j]);
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i) qs[(ty + i * NY) * HP + tx] = l[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = ty + i * NY;
        float sum = 0.f;
        for (int x = 0; x < NX; ++x) sum += qs[r * HP + x];
        const float inv = 1.f / sum;
        if (m0 + r < S)
#pragma unroll
            for (int j = 0; j < DN; ++j) st(O, head + (size_t)(m0 + r) * HD + tx + j * NX, acc[i][j] * inv);
    }
}
#endif

// ---- flash on tensor cores (fp16 / bf16) ----------------------------------------------------

#ifdef MMA
#ifndef MWARPS
#define MWARPS 4  // warps per block, 16 query rows each: MBM = 64 or 128 query rows
#endif
#ifndef MBN
#define MBN 64  // keys per K/V tile: 64 or 128
#endif
#define MBM (16 * MWARPS)
#define MNT (32 * MWARPS)
#define CH (HD / 8)  // 16-byte chunks per row

#define MMA_BF16 (DT == 2)
#include "mma_sm80.cuh"

// element offset of (row, 16-byte chunk) in a swizzled [rows][HD] tile
__device__ __forceinline__ int swz(int row, int chunk) { return row * HD + ((chunk ^ (row & 7)) << 3); }

// rows [r0, r0 + ROWS) of a head into a swizzled tile (zero-filled past S); MNT threads
template <int ROWS>
__device__ __forceinline__ void load_tile(u16* tile, const u16* src, int r0, int S) {
#pragma unroll
    for (int i = 0; i < ROWS * CH / MNT; ++i) {
        const int id = threadIdx.x + i * MNT, r = id / CH, c = id % CH;
        const bool ok = r0 + r < S;
        cp_async16(smem_u32(tile + swz(r, c)), src + (ok ? (size_t)(r0 + r) * HD + c * 8 : 0), ok ? 16 : 0);
    }
}

extern "C" __global__ void __launch_bounds__(MNT)
attention_flash_mma(const u16* __restrict__ Q, const u16* __restrict__ K, const u16* __restrict__ V,
                    u16* __restrict__ O, int S, float qk_scale) {
    extern __shared__ __align__(128) u16 smem[];
    u16* Qs = smem;                   // [MBM][HD]
    u16* Ks = smem + MBM * HD;        // 2 × [MBN][HD]
    u16* Vs = Ks + 2 * MBN * HD;      // 2 × [MBN][HD]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, tq = lane & 3;  // the fragment's row group and column pair
    // causal: the longest query blocks (last rows, most keys) start first, so the short ones
    // fill the tail of the grid instead of one long block running alone at the end
    const int m0 = (CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * MBM;
    const size_t head = (size_t)blockIdx.y * S * HD;
    const u16 *Qh = Q + head, *Kh = K + head, *Vh = V + head;
    const int kend = CAUSAL ? min(S, m0 + MBM) : S;
    const int tiles = (kend + MBN - 1) / MBN;

    load_tile<MBM>(Qs, Qh, m0, S);
    load_tile<MBN>(Ks, Kh, 0, S);
    load_tile<MBN>(Vs, Vh, 0, S);
    cp_async_commit();

    unsigned qf[HD / 16][4];  // A fragments of the warp's 16 query rows
    float oacc[HD / 8][4];
    float mrow[2] = {NEG, NEG}, lrow[2] = {0.f, 0.f};  // rows g and g + 8
#pragma unroll
    for (int j = 0; j < HD / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) oacc[j][e] = 0.f;

    for (int t = 0; t < tiles; ++t) {
        if (t + 1 < tiles) {  // prefetch the next K/V tile into the other stage
            load_tile<MBN>(Ks + ((t + 1) & 1) * MBN * HD, Kh, (t + 1) * MBN, S);
            load_tile<MBN>(Vs + ((t + 1) & 1) * MBN * HD, Vh, (t + 1) * MBN, S);
        }
        cp_async_commit();
        cp_async_wait<1>();  // tile t (and Q) landed for this thread ...
        __syncthreads();     // ... and for all
        if (t == 0) {
#pragma unroll
            for (int kk = 0; kk < HD / 16; ++kk)
                ldmatrix_x4(qf[kk], smem_u32(Qs + swz(warp * 16 + (lane & 15), kk * 2 + (lane >> 4))));
        }
        const u16* Kt = Ks + (t & 1) * MBN * HD;
        const u16* Vt = Vs + (t & 1) * MBN * HD;
        const int n0 = t * MBN;

        float sacc[MBN / 8][4];  // S = Q·Kᵀ, 16 × MBN per warp
#pragma unroll
        for (int j = 0; j < MBN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) sacc[j][e] = 0.f;
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) {
#pragma unroll
            for (int nn = 0; nn < MBN / 16; ++nn) {  // keys nn·16.. (two n8 tiles), d kk·16..
                unsigned b[4];
                const int q4 = lane >> 3;
                ldmatrix_x4(b, smem_u32(Kt + swz(nn * 16 + (lane & 7) + ((q4 >> 1) << 3), kk * 2 + (q4 & 1))));
                mma16816(sacc[2 * nn], qf[kk], b[0], b[1]);
                mma16816(sacc[2 * nn + 1], qf[kk], b[2], b[3]);
            }
        }
        // scale, mask (only tiles that reach the diagonal or S), new running max per row
        const bool masked = n0 + MBN > S || (CAUSAL && n0 + MBN > m0);
        const int row0 = m0 + warp * 16 + g;
        float mx[2] = {NEG, NEG};
#pragma unroll
        for (int j = 0; j < MBN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float v = sacc[j][e] * qk_scale;
                if (masked) {
                    const int key = n0 + j * 8 + 2 * tq + (e & 1), row = row0 + (e >> 1) * 8;
                    if (key >= S || (CAUSAL && key > row)) v = NEG_INF;
                }
                sacc[j][e] = v;
                mx[e >> 1] = fmaxf(mx[e >> 1], v);
            }
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // the quad of lanes holding the row
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
            mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
            const float mn = fmaxf(mrow[h], mx[h]), alpha = exp2f(mrow[h] - mn);
            mrow[h] = mn;
            lrow[h] *= alpha;
#pragma unroll
            for (int j = 0; j < HD / 8; ++j) {
                oacc[j][2 * h] *= alpha;
                oacc[j][2 * h + 1] *= alpha;
            }
        }
        // P = exp2(t − m): fp32 partial sums, then 16-bit A fragments for P·V
        unsigned pf[MBN / 16][4];
#pragma unroll
        for (int j = 0; j < MBN / 8; ++j) {
            float p[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                p[e] = exp2f(sacc[j][e] - mrow[e >> 1]);
                lrow[e >> 1] += p[e];
            }
            pf[j >> 1][(j & 1) * 2] = pack2(p[0], p[1]);      // row g,     keys j·8 + 2tq..
            pf[j >> 1][(j & 1) * 2 + 1] = pack2(p[2], p[3]);  // row g + 8
        }
#pragma unroll
        for (int kk = 0; kk < MBN / 16; ++kk) {  // keys kk·16..: O += P·V
#pragma unroll
            for (int dn = 0; dn < HD / 16; ++dn) {  // d dn·16.. (two n8 tiles)
                unsigned b[4];
                const int q4 = lane >> 3;
                ldmatrix_x4_trans(b, smem_u32(Vt + swz(kk * 16 + (lane & 7) + ((q4 & 1) << 3), dn * 2 + (q4 >> 1))));
                mma16816(oacc[2 * dn], pf[kk], b[0], b[1]);
                mma16816(oacc[2 * dn + 1], pf[kk], b[2], b[3]);
            }
        }
        __syncthreads();  // stage t & 1 is refilled by the next iteration's prefetch
    }
    cp_async_wait<0>();
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 1);
        lrow[h] += __shfl_xor_sync(0xffffffffu, lrow[h], 2);
    }
    const int row = m0 + warp * 16 + g;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = row + h * 8;
        if (r >= S) continue;
        const float inv = 1.f / lrow[h];
#pragma unroll
        for (int j = 0; j < HD / 8; ++j)
            *reinterpret_cast<unsigned*>(O + head + (size_t)r * HD + j * 8 + 2 * tq) =
                pack2(oacc[j][2 * h] * inv, oacc[j][2 * h + 1] * inv);
    }
}
#endif
