// attention.wgsl — O = softmax(Q·Kᵀ·scale)·V per (batch, head); Q, K, V, O row-major [B, H, S, HD]
// (head bh starts at element bh·S·HD); the algorithms of attention.cl, with the same entry names.
// Reads Q, K, V and writes O: 4·B·H·S·HD·s bytes at the fewest (s = element size); 4·B·H·S²·HD
// flops (half causal). Causal: query i sees keys j ≤ i.
//
// Placeholders: DT (0 fp32, 1 fp16, 2 bf16 storage; math is fp32), HD (64/128), CAUSAL (0/1), WG
// (naive softmax workgroup), SEQ and ROWS (fused_rows), BM BN TM TN (flash). Tensors are bound as
// raw u32 words (array<u32>) and reinterpreted: fp16 through unpack2x16float and bf16 as the top
// half of an f32 word (exact, core WGSL: no shader-f16 needed); outputs are rounded to nearest even
// in integer arithmetic. Two 16-bit outputs share a word, so every kernel stages its output rows
// in workgroup memory and writes whole words (HD is even: a word never straddles two rows).
// Indices are u32 (B·H·S·HD < 2^32). Scores in the log2 domain (qk_scale = log2(e)/√HD, exp2);
// "no score yet" is −FLT_MAX, never −inf. Every entry binds Q, K, V, O, P (the naive scratch;
// a 16-byte dummy elsewhere) and the uniform params, in that order, touching each (phony
// assignments) so that one bind-group layout serves all.
//
//   attention_scores   naive 1/3: workgroup 16×16, invocation (j, i) of head bh0 + wid.z writes
//                      P[z][i][j] = t (−inf where masked) into the f32 scratch [nbh][S][S]
//   attention_softmax  naive 2/3: workgroup WG per row (wid.x = row, wid.z = head in chunk):
//                      max, Σ exp2, then the row is overwritten with exp2(t − m)/Σ
//   attention_pv       naive 3/3: workgroup HD per row, invocation d: O[i][d] = Σ_j P[i][j]·V[j][d]
//   attention_fused_rows  workgroup HD per ROWS query rows (wid.x = row block, wid.y = head): all
//                      ROWS·SEQ scores in workgroup memory, then Σ_j p·V[j][d] per invocation d
//   attention_flash    workgroup NT = (BM/TM)·(BN/TN) per BM query rows (wid.x = block, wid.y =
//                      head; causal: wid.x = head, wid.y = block, reversed): Q tile in workgroup
//                      memory, K/V tiles of BN keys through one buffer, TM×TN score tiles and
//                      TM×DN accumulators per invocation, online softmax (attention.cl's algorithm;
//                      vec4 rows padded to HD + 4 floats, see the flash section)

struct Params { s: u32, bh0: u32, qk: u32, pad: u32 }

@group(0) @binding(0) var<storage, read> Qw: array<u32>;
@group(0) @binding(1) var<storage, read> Kw: array<u32>;
@group(0) @binding(2) var<storage, read> Vw: array<u32>;
@group(0) @binding(3) var<storage, read_write> Ow: array<u32>;
@group(0) @binding(4) var<storage, read_write> P: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

const DT: u32 = {{DT}}u;
const HD: u32 = {{HD}}u;
const CAUSAL: bool = {{CAUSAL}} == 1;
const WG: u32 = {{WG}}u;
const SEQ: u32 = {{SEQ}}u;
const ROWS: u32 = {{ROWS}}u;
const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const NX: u32 = BN / TN;
const NY: u32 = BM / TM;
const NT: u32 = NX * NY;
const DN: u32 = HD / NX;
const NEG: f32 = -3.4028234663852886e38;
const NEG_INF_BITS: u32 = 0xff800000u;

fn touch() {  // every binding statically used by every entry (one layout for all)
    _ = arrayLength(&Qw);
    _ = arrayLength(&Kw);
    _ = arrayLength(&Vw);
    _ = arrayLength(&Ow);
    _ = arrayLength(&P);
    _ = p.pad;
}

// ---- conversions ----------------------------------------------------------------------------

#include "f16.wgsl"

fn half_of(w: u32, e: u32) -> f32 { return h2f((w >> ((e & 1u) * 16u)) & 0xffffu); }

fn ldq(e: u32) -> f32 {
    if (DT == 0u) { return bitcast<f32>(Qw[e]); }
    return half_of(Qw[e >> 1u], e);
}
fn ldk(e: u32) -> f32 {
    if (DT == 0u) { return bitcast<f32>(Kw[e]); }
    return half_of(Kw[e >> 1u], e);
}
fn ldv(e: u32) -> f32 {
    if (DT == 0u) { return bitcast<f32>(Vw[e]); }
    return half_of(Vw[e >> 1u], e);
}

// output word w of O from two (or, fp32, one) values
fn st_word(w: u32, v0: f32, v1: f32) {
    if (DT == 0u) {
        Ow[w] = bitcast<u32>(v0);
    } else {
        Ow[w] = enc16(v0) | (enc16(v1) << 16u);
    }
}

// words per row of O and elements per word
const WPR: u32 = select(HD / 2u, HD, DT == 0u);
const EPW: u32 = select(2u, 1u, DT == 0u);

var<workgroup> red: array<f32, 1024>;  // reductions, staged output rows of naive / fused_rows

// tree over n (a power of two ≤ 1024) invocations; every invocation gets the result
fn wg_reduce(v: f32, is_max: bool, t: u32, n: u32) -> f32 {
    red[t] = v;
    workgroupBarrier();
    for (var s = n / 2u; s > 0u; s >>= 1u) {
        if (t < s) {
            red[t] = select(red[t] + red[t + s], max(red[t], red[t + s]), is_max);
        }
        workgroupBarrier();
    }
    let r = red[0];
    workgroupBarrier();  // red is reused
    return r;
}

// ---- naive ----------------------------------------------------------------------------------

@compute @workgroup_size(16, 16)
fn attention_scores(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    touch();
    let j = wid.x * 16u + lid.x;
    let i = wid.y * 16u + lid.y;
    let s = p.s;
    if (i >= s || j >= s) { return; }
    let head = (p.bh0 + wid.z) * s * HD;
    var acc = 0.0;
    for (var d = 0u; d < HD; d++) {
        acc = fma(ldq(head + i * HD + d), ldk(head + j * HD + d), acc);
    }
    var t = acc * bitcast<f32>(p.qk);
    if (CAUSAL && j > i) { t = bitcast<f32>(NEG_INF_BITS); }
    P[(wid.z * s + i) * s + j] = t;
}

@compute @workgroup_size(WG)
fn attention_softmax(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    touch();
    let s = p.s;
    let row = (wid.z * s + wid.x) * s;
    var m = NEG;
    for (var j = t; j < s; j += WG) { m = max(m, P[row + j]); }
    m = wg_reduce(m, true, t, WG);
    var l = 0.0;
    for (var j = t; j < s; j += WG) { l += exp2(P[row + j] - m); }
    l = wg_reduce(l, false, t, WG);
    let inv = 1.0 / l;
    for (var j = t; j < s; j += WG) { P[row + j] = exp2(P[row + j] - m) * inv; }
}

// the staged row red[0..HD) → O row i of head (whole words)
fn write_row(head: u32, i: u32, t: u32) {
    if (t < WPR) {
        st_word(head / EPW + i * WPR + t, red[t * EPW], red[t * EPW + EPW - 1u]);
    }
}

@compute @workgroup_size(HD)
fn attention_pv(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) d: u32) {
    touch();
    let s = p.s;
    let i = wid.x;
    let head = (p.bh0 + wid.z) * s * HD;
    let row = (wid.z * s + i) * s;
    let jend = select(s, i + 1u, CAUSAL);  // P is 0 past the diagonal
    var acc = 0.0;
    for (var j = 0u; j < jend; j++) { acc = fma(P[row + j], ldv(head + j * HD + d), acc); }
    red[d] = acc;
    workgroupBarrier();
    write_row(head, i, d);
}

// ---- fused_rows -----------------------------------------------------------------------------

var<workgroup> fq: array<f32, ROWS * HD>;
var<workgroup> fs: array<f32, ROWS * SEQ>;

@compute @workgroup_size(HD)
fn attention_fused_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    touch();
    let s = p.s;
    let qk = bitcast<f32>(p.qk);
    let i0 = wid.x * ROWS;
    let head = wid.y * s * HD;
    // @unroll
    for (var r = 0u; r < ROWS; r++) {
        fq[r * HD + t] = select(0.0, ldq(head + (i0 + r) * HD + t), i0 + r < s);
    }
    workgroupBarrier();
    let jend = select(s, min(s, i0 + ROWS), CAUSAL);
    for (var j = t; j < jend; j += HD) {  // invocation t: keys t, t + HD, ...
        var acc: array<f32, ROWS>;
        // @unroll
        for (var r = 0u; r < ROWS; r++) { acc[r] = 0.0; }  // (explicitly: a var in a loop body
        // may be zeroed only once by some compilers)
        for (var d = 0u; d < HD; d++) {
            let k = ldk(head + j * HD + d);
            // @unroll
            for (var r = 0u; r < ROWS; r++) { acc[r] = fma(fq[r * HD + d], k, acc[r]); }
        }
        // @unroll
        for (var r = 0u; r < ROWS; r++) {
            var v = acc[r] * qk;
            if (CAUSAL && j > i0 + r) { v = bitcast<f32>(NEG_INF_BITS); }
            fs[r * SEQ + j] = v;
        }
    }
    workgroupBarrier();
    var inv: array<f32, ROWS>;
    // @unroll
    for (var r = 0u; r < ROWS; r++) {
        var m = NEG;
        for (var j = t; j < jend; j += HD) { m = max(m, fs[r * SEQ + j]); }
        m = wg_reduce(m, true, t, HD);
        var l = 0.0;
        for (var j = t; j < jend; j += HD) {
            let e = exp2(fs[r * SEQ + j] - m);
            fs[r * SEQ + j] = e;
            l += e;
        }
        inv[r] = 1.0 / wg_reduce(l, false, t, HD);  // (its barriers also publish fs)
    }
    var acc: array<f32, ROWS>;
    // @unroll
    for (var r = 0u; r < ROWS; r++) { acc[r] = 0.0; }
    for (var j = 0u; j < jend; j++) {  // invocation t = column d
        let v = ldv(head + j * HD + t);
        // @unroll
        for (var r = 0u; r < ROWS; r++) { acc[r] = fma(fs[r * SEQ + j], v, acc[r]); }
    }
    // @unroll
    for (var r = 0u; r < ROWS; r++) {
        red[t] = acc[r] * inv[r];
        workgroupBarrier();
        if (i0 + r < s) { write_row(head, i0 + r, t); }
        workgroupBarrier();
    }
}

// ---- flash ----------------------------------------------------------------------------------
//
// Q and K/V rows are held as vec4 (rows padded to HD + 4 floats: 16-byte aligned; eight
// consecutive rows fall in distinct bank quads), so the score loop reads a 4-deep slice of a row
// per load and the P·V loop an invocation's 4 adjacent output columns per load. An invocation owns
// output columns tx·DN .. tx·DN + DN − 1 (contiguous: vec4 accumulators) and writes them to O from
// registers. Needs DN % 4 == 0 (the tile list keeps DN ≥ 4, a power of two). On the H200 (580
// driver, D = 64 fp32, probes-20261202-session12/6de880c) this ran at 12.2–12.5 TFLOP/s against
// 9.1 for the same tiles with scalar f32 rows (OpenCL's layout, measured and removed). The score /
// P tile has vec4 rows too (BN + 4 floats), so the row max and the P·V loop read 4 keys per load
// (after that probe: 1 instead of 4 P loads per row and 4 keys there; 14.2 TFLOP/s in e50ef7).
// P written to a second tile instead of over the scores (one barrier fewer per K/V tile) ran at
// 10.7 TFLOP/s against 14.3 (probes-20261202-session12/26fef62): removed.
// Q is multiplied by qk_scale as its tile is read (once per Q value, not once per score), and the
// key-range mask is tested only on the K/V tiles that reach past S or (causal) above the
// diagonal: the other tiles need no test.
// Every loop over a register tile (TM, TN, DN) is unrolled at compile time (// @unroll,
// backends/wgsl_unroll.py): indexed by a loop counter, the tiles stay in local memory on NVIDIA's
// Vulkan driver (measured before this: 0.25 TFLOP/s fp32 at B1 H16 S4096 D64, 0.5 % of the peak).
const PW: u32 = BN / 4u + 1u;  // row stride of ps4 in vec4s (BN + 4 floats)
var<workgroup> ps4: array<vec4<f32>, BM * PW>;  // P = exp2(t − m); at the end the row sums
// the row max: each invocation writes its TN scores' max per row to pm4 (BM × NX partial maxima),
// so the running max reads NX instead of BN values per row, and the scores stay in registers until
// P overwrites ps4 (4 barriers per K/V tile; scores through ps4 and a barrier before P: 5, and
// 14.3 against 15.0 TFLOP/s on the H200, probes-20261202-session13)
const PMW: u32 = NX / 4u + 1u;  // row stride of pm4 in vec4s (NX ≥ 4 in every listed tile)
var<workgroup> pm4: array<vec4<f32>, BM * PMW>;
const HP4: u32 = HD / 4u + 1u;  // row stride in vec4s
const DN4: u32 = DN / 4u;
var<workgroup> qs4: array<vec4<f32>, BM * HP4>;
var<workgroup> kv4: array<vec4<f32>, BN * HP4>;

fn ldq4(e: u32) -> vec4<f32> { return vec4<f32>(ldq(e), ldq(e + 1u), ldq(e + 2u), ldq(e + 3u)); }
fn ldk4(e: u32) -> vec4<f32> { return vec4<f32>(ldk(e), ldk(e + 1u), ldk(e + 2u), ldk(e + 3u)); }
fn ldv4(e: u32) -> vec4<f32> { return vec4<f32>(ldv(e), ldv(e + 1u), ldv(e + 2u), ldv(e + 3u)); }

@compute @workgroup_size(NT)
fn attention_flash(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) tid: u32) {
    touch();
    let s = p.s;
    let qk = bitcast<f32>(p.qk);
    let tx = tid % NX;
    let ty = tid / NX;
    let m0 = select(wid.x, nwg.y - 1u - wid.y, CAUSAL) * BM;
    let head = select(wid.y, wid.x, CAUSAL) * s * HD;
    for (var e = tid; e < BM * (HD / 4u); e += NT) {  // read Q tile ·qk, 4 values at a time (zeros past S)
        let r = e / (HD / 4u);
        let d4 = e % (HD / 4u);
        qs4[r * HP4 + d4] = select(vec4<f32>(0.0), ldq4(head + (m0 + r) * HD + 4u * d4) * qk, m0 + r < s);
    }
    var acc: array<array<vec4<f32>, DN4>, TM>;
    var m: array<f32, TM>;
    var l: array<f32, TM>;
    // @unroll
    for (var i = 0u; i < TM; i++) {
        m[i] = NEG;
        l[i] = 0.0;
        // @unroll
        for (var j = 0u; j < DN4; j++) { acc[i][j] = vec4<f32>(0.0); }
    }
    let kend = select(s, min(s, m0 + BM), CAUSAL);
    for (var n0 = 0u; n0 < kend; n0 += BN) {
        workgroupBarrier();  // the last tile's P·V is done with kv4 and ps
        for (var e = tid; e < BN * (HD / 4u); e += NT) {  // read K tile
            let c = e / (HD / 4u);
            let d4 = e % (HD / 4u);
            kv4[c * HP4 + d4] = select(vec4<f32>(0.0), ldk4(head + (n0 + c) * HD + 4u * d4), n0 + c < s);
        }
        workgroupBarrier();
        var sc: array<array<f32, TN>, TM>;
        // @unroll
        for (var i = 0u; i < TM; i++) {
            // @unroll
            for (var j = 0u; j < TN; j++) { sc[i][j] = 0.0; }
        }
        // @unroll
        for (var d4 = 0u; d4 < HD / 4u; d4++) {
            var a: array<vec4<f32>, TM>;
            var b: array<vec4<f32>, TN>;
            // @unroll
            for (var i = 0u; i < TM; i++) { a[i] = qs4[(ty + i * NY) * HP4 + d4]; }
            // @unroll
            for (var j = 0u; j < TN; j++) { b[j] = kv4[(tx + j * NX) * HP4 + d4]; }
            // @unroll
            for (var i = 0u; i < TM; i++) {
                // @unroll
                for (var j = 0u; j < TN; j++) {
                    var t = fma(a[i].x, b[j].x, sc[i][j]);
                    t = fma(a[i].y, b[j].y, t);
                    t = fma(a[i].z, b[j].z, t);
                    sc[i][j] = fma(a[i].w, b[j].w, t);
                }
            }
        }
        if (n0 + BN > s || (CAUSAL && n0 + BN > m0 + 1u)) {  // keys past S or above the diagonal
            // @unroll
            for (var i = 0u; i < TM; i++) {
                let row = m0 + ty + i * NY;
                // @unroll
                for (var j = 0u; j < TN; j++) {
                    let key = n0 + tx + j * NX;
                    if (key >= s || (CAUSAL && key > row)) { sc[i][j] = bitcast<f32>(NEG_INF_BITS); }
                }
            }
        }
        // @unroll
        for (var i = 0u; i < TM; i++) {
            var pmx = sc[i][0];  // this invocation's max of the row, from registers
            // @unroll
            for (var j = 1u; j < TN; j++) { pmx = max(pmx, sc[i][j]); }
            pm4[(ty + i * NY) * PMW + tx / 4u][tx % 4u] = pmx;
        }
        workgroupBarrier();  // partial maxima complete; K no longer read
        for (var e = tid; e < BN * (HD / 4u); e += NT) {  // read V tile
            let c = e / (HD / 4u);
            let d4 = e % (HD / 4u);
            kv4[c * HP4 + d4] = select(vec4<f32>(0.0), ldv4(head + (n0 + c) * HD + 4u * d4), n0 + c < s);
        }
        // @unroll
        for (var i = 0u; i < TM; i++) {  // new running max of each row from the score tile
            var rm = NEG;
            // @unroll
            for (var c4 = 0u; c4 < NX / 4u; c4++) {
                let v = pm4[(ty + i * NY) * PMW + c4];
                rm = max(rm, max(max(v.x, v.y), max(v.z, v.w)));
            }
            let mn = max(m[i], rm);
            let alpha = exp2(m[i] - mn);
            m[i] = mn;
            l[i] *= alpha;
            // @unroll
            for (var j = 0u; j < DN4; j++) { acc[i][j] *= alpha; }
        }
        // @unroll
        for (var i = 0u; i < TM; i++) {
            // @unroll
            for (var j = 0u; j < TN; j++) {
                let e = exp2(sc[i][j] - m[i]);
                l[i] += e;
                ps4[(ty + i * NY) * PW + (tx + j * NX) / 4u][(tx + j * NX) % 4u] = e;
            }
        }
        workgroupBarrier();  // P and the V tile complete
        // @unroll
        for (var c4 = 0u; c4 < BN / 4u; c4++) {  // P read 4 keys per load
            var pe: array<vec4<f32>, TM>;
            // @unroll
            for (var i = 0u; i < TM; i++) { pe[i] = ps4[(ty + i * NY) * PW + c4]; }
            // @unroll
            for (var cc = 0u; cc < 4u; cc++) {
                var vv: array<vec4<f32>, DN4>;
                // @unroll
                for (var j = 0u; j < DN4; j++) { vv[j] = kv4[(4u * c4 + cc) * HP4 + tx * DN4 + j]; }
                // @unroll
                for (var i = 0u; i < TM; i++) {
                    // @unroll
                    for (var j = 0u; j < DN4; j++) { acc[i][j] = fma(vec4<f32>(pe[i][cc]), vv[j], acc[i][j]); }
                }
            }
        }
    }
    workgroupBarrier();  // ps4 is free: the NX partial sums of each row meet there
    // @unroll
    for (var i = 0u; i < TM; i++) { ps4[(ty + i * NY) * PW + tx / 4u][tx % 4u] = l[i]; }
    workgroupBarrier();
    // @unroll
    for (var i = 0u; i < TM; i++) {  // normalise and write the invocation's DN columns of O
        let r = ty + i * NY;
        var sum = 0.0;
        for (var x = 0u; x < NX; x++) { sum += ps4[r * PW + x / 4u][x % 4u]; }
        let inv = 1.0 / sum;
        if (m0 + r < s) {
            let o = head + (m0 + r) * HD + tx * DN;  // element index of the first column
            // @unroll
            for (var j = 0u; j < DN4; j++) {
                let v = acc[i][j] * inv;
                if (DT == 0u) {
                    Ow[o + 4u * j] = bitcast<u32>(v.x);
                    Ow[o + 4u * j + 1u] = bitcast<u32>(v.y);
                    Ow[o + 4u * j + 2u] = bitcast<u32>(v.z);
                    Ow[o + 4u * j + 3u] = bitcast<u32>(v.w);
                } else {
                    Ow[(o + 4u * j) / 2u] = enc16(v.x) | (enc16(v.y) << 16u);
                    Ow[(o + 4u * j) / 2u + 1u] = enc16(v.z) | (enc16(v.w) << 16u);
                }
            }
        }
    }
}
