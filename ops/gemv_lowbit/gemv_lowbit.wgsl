// gemv_lowbit.wgsl — y[b, n] = Σ_k w[n, k]·x[b, k], W [N, K] in the low-bit formats of
// references/lowbit.py (w4a16: offset-binary nibbles, k even in the low nibble, one fp16 scale
// per 128 k; w8a16: int8, one fp16 scale per row), x fp16 [B, K], y fp16 [B, N], B ≤ 8; with
// DT 2 scales, x, y (and the dense W) are bf16 (the top half of an f32) instead.
// Bytes: packed W + scales + x + y, plus 2 × 4·B·N of the fp32 staging below (dequant_then_gemv
// adds the dense W written and read, 2·2·N·K); flops 2·N·K·B. K is a multiple of 128.
//
// Loops over the private arrays (acc, part, the weight words) and over constant trip counts are
// `// @unroll` (backends/wgsl_unroll.py): constant indices keep them in registers on NVIDIA Vulkan;
// packed fields unpack with the 2^23 magic, shift-free (wval: one AND/OR + one subtraction, exact).
// Core WGSL only (no shader-f16, no subgroups): 16-bit words are read by h2f and written by enc16
// of ops/common/f16.wgsl (round to nearest even in integer arithmetic; WGSL leaves
// pack2x16float's rounding open). The weights are bound as array<vec4<u32>> (every row starts on 16 bytes), so
// U = 4 is one 16-byte load (U = 8: two) and U = 1 one word of it. y cannot be stored element-wise (16-bit
// halves of a shared word, odd N, rows of B straddling words), so gemv_lowbit writes fp32 sums
// to `acc` and gemv_pack rounds word pairs to fp16. Every entry point touches every binding
// (arrayLength) so all share one bind-group layout.
//
// Placeholders: BITS (4, 8; 16 = dense fp16 W), NB (batch), U (words per load, 1 or 4), RPT
// (rows per team), TEAM (invocations per team, a power of two), WG = TEAM·TEAMS.
// Thread → data: team t of workgroup g (g = x + y·groups_x, grid_2d) owns rows
// n = (g·TEAMS + t)·RPT + r; invocation l loads units l, l+TEAM, ... of each row (U words,
// inside one scale group), sums the exact q·x products in fp32, scales (w4a16) and accumulates;
// the RPT·NB sums are reduced across the team by a workgroup-memory tree; invocation 0 writes.
//
//   gemv_lowbit     groups ⌈N / (TEAMS·RPT)⌉ (fused: U 1, RPT 1, TEAM 64; fused_vec: U 4, RPT 4,
//                   TEAM 32; dense GEMV: BITS 16, U 4, RPT 1, TEAM 64)
//   gemv_pack       invocation per word of y (two fp16 of the flat [B, N]): ⌈B·N/2 / WG⌉ groups
//   dequant_lowbit  invocation per word of the dense fp16 W (two k): ⌈N·K/2 / WG⌉ groups

struct Params { n: u32, k: u32, total: u32, pad: u32 }

@group(0) @binding(0) var<storage, read> wq: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> sc: array<u32>;
@group(0) @binding(2) var<storage, read> xs: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> acc_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<u32>;
@group(0) @binding(5) var<storage, read_write> wd: array<u32>;
@group(0) @binding(6) var<uniform> p: Params;

const DT: u32 = {{DT}}u;  // 16-bit type of scales, x, y and the dense W: 1 fp16, 2 bf16
const BITS: u32 = {{BITS}}u;
const NB: u32 = {{NB}}u;
const U: u32 = {{U}}u;
const RPT: u32 = {{RPT}}u;
const TEAM: u32 = {{TEAM}}u;
const WG: u32 = {{WG}}u;
const TEAMS: u32 = WG / TEAM;
const VPW: u32 = 32u / BITS;
const RN: u32 = RPT * NB;
const GROUP: u32 = 128u;

#include "f16.wgsl"

var<workgroup> red: array<f32, WG>;

fn touch() -> u32 {
    return arrayLength(&wq) + arrayLength(&sc) + arrayLength(&xs) + arrayLength(&acc_out) + arrayLength(&y)
        + arrayLength(&wd);
}

// the low (hi false) or high 16-bit half of a word as f32 (h2f: ops/common/f16.wgsl)
fn half_of(w: u32, hi: bool) -> f32 { return h2f(select(w, w >> 16u, hi)); }

fn scale(i: u32) -> f32 { return half_of(sc[i >> 1u], (i & 1u) == 1u); }

// x values per load: 8 (one vec4<u32>), or the whole unit where it holds fewer (fused int8: 4);
// XW weight words share one load. Loading x a 32-bit word at a time (before session 12) made its
// reads the limiter on NVIDIA: a team's lanes read units 64 bytes apart.
const XC: u32 = min(8u, U * VPW);
const XW: u32 = XC / VPW;
const UV: u32 = (U + 3u) / 4u;  // vec4 weight loads per row and step

// x[i .. i+XC-1] (flat index i, a multiple of XC) as packed 16-bit pairs in .x (2 values), .xy
// (4) or all four words (8): one 16-byte load
fn xchunk(i: u32) -> vec4<u32> {
    let q = xs[i >> 3u];
    if (XC == 8u) { return q; }
    let s = (i >> 1u) & 3u;  // word of q where the chunk starts
    if (XC == 4u) { return select(q, q.zwxy, s == 2u); }
    return vec4<u32>(q[s], 0u, 0u, 0u);
}

// flat 32-bit word i of the weights
fn wword(i: u32) -> u32 { return wq[i >> 2u][i & 3u]; }

// field (src >> sh) & mask of a word, offset binary with offset `half`, as f32 (exact) without a
// shift: (src & (mask << sh)) under the exponent of 2^(23 − sh) reads as 2^(23 − sh) + field (the
// field's lowest bit is one unit of that float's mantissa), so one AND/OR and one subtraction
// leave field − half = q. sh ≤ 16 keeps the field inside the 23-bit mantissa.
fn field(src: u32, sh: u32, mask: u32, half: f32) -> f32 {
    return bitcast<f32>((src & (mask << sh)) | (0x4B000000u - (sh << 23u))) - (f32(1u << (23u - sh)) + half);
}

// a weight word with its fields in offset binary: int8 is two's complement, ^ 0x80 per byte makes
// it q + 128 (int4 is stored as q + 8 already); computed once per word by the caller
fn wpre(w: u32) -> u32 {
    if (BITS == 8u) { return w ^ 0x80808080u; }
    return w;
}

// the high-field word wval needs beside u = wpre(w): int4 nibbles 5..7 at bits 8, 12, 16, int8
// bytes 2, 3 at bits 0, 8; computed once per word by the caller
fn whi(u: u32) -> u32 {
    if (BITS == 4u) { return u >> 12u; }
    return u >> 16u;
}

// value e of a weight word as f32 (exact), from u = wpre(w) and hi = whi(u)
fn wval(u: u32, hi: u32, e: u32) -> f32 {
    if (BITS == 4u) { return field(select(hi, u, e < 5u), 4u * select(e - 3u, e, e < 5u), 15u, 8.0); }
    if (BITS == 8u) { return field(select(hi, u, e < 2u), 8u * (e & 1u), 255u, 128.0); }
    return half_of(u, e == 1u);
}

@compute @workgroup_size(WG)
fn gemv_lowbit(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    if (touch() == 0u) { return; }  // never: every buffer has ≥ 16 bytes (uniform: reached by all)
    let g = wid.x + wid.y * nwg.x;
    let lane = lid % TEAM;
    let team = lid / TEAM;
    let n_rows = p.n;
    let k_len = p.k;
    let n0 = (g * TEAMS + team) * RPT;
    let wpr = k_len / VPW;
    let upr = wpr / U;
    var acc: array<f32, RN>;
    if (n0 < n_rows) {
        for (var u = lane; u < upr; u += TEAM) {
            let k0 = u * U * VPW;
            var ws: array<vec4<u32>, RPT * UV>;
            // @unroll
            for (var r = 0u; r < RPT; r++) {
                let base = min(n0 + r, n_rows - 1u) * wpr + u * U;  // rows past N recompute row N-1, never stored
                if (U >= 4u) {
                    // @unroll
                    for (var q = 0u; q < UV; q++) { ws[r * UV + q] = wq[(base >> 2u) + q]; }
                } else {
                    ws[r] = vec4<u32>(wword(base), 0u, 0u, 0u);
                }
            }
            var part: array<f32, RN>;
            // zeroed explicitly: lavapipe (Naga → SPIR-V) keeps the values of the previous
            // iteration in a loop-scoped var without an initializer
            // @unroll
            for (var i = 0u; i < RN; i++) { part[i] = 0.0; }
            var xc: array<vec4<u32>, NB>;  // x of XW words, loaded once for the RPT rows
            // @unroll
            for (var j = 0u; j < U; j++) {
                if (j % XW == 0u) {
                    // @unroll
                    for (var b = 0u; b < NB; b++) { xc[b] = xchunk(b * k_len + k0 + j * VPW); }
                }
                var lw: array<u32, RPT>;  // word j of each row in offset binary, and its high fields
                var hw: array<u32, RPT>;
                // @unroll
                for (var r = 0u; r < RPT; r++) {
                    lw[r] = wpre(ws[r * UV + j / 4u][j % 4u]);
                    hw[r] = whi(lw[r]);
                }
                // @unroll
                for (var e = 0u; e < VPW; e++) {
                    let h = (j % XW) * VPW + e;  // x value of the chunk
                    var xv: array<f32, NB>;
                    // @unroll
                    for (var b = 0u; b < NB; b++) { xv[b] = half_of(xc[b][h >> 1u], (h & 1u) == 1u); }
                    // @unroll
                    for (var r = 0u; r < RPT; r++) {
                        let wv = wval(lw[r], hw[r], e);
                        // @unroll
                        for (var b = 0u; b < NB; b++) { part[r * NB + b] = fma(wv, xv[b], part[r * NB + b]); }
                    }
                }
            }
            // @unroll
            for (var r = 0u; r < RPT; r++) {
                var s = 1.0;
                if (BITS == 4u) { s = scale(min(n0 + r, n_rows - 1u) * (k_len / GROUP) + k0 / GROUP); }
                // @unroll
                for (var b = 0u; b < NB; b++) { acc[r * NB + b] = fma(part[r * NB + b], s, acc[r * NB + b]); }
            }
        }
    }
    // @unroll
    for (var i = 0u; i < RN; i++) {
        red[lid] = acc[i];
        workgroupBarrier();
        for (var o = TEAM / 2u; o > 0u; o >>= 1u) {
            if (lane < o) { red[lid] += red[lid + o]; }
            workgroupBarrier();
        }
        let total = red[team * TEAM];
        workgroupBarrier();
        let n = n0 + i / NB;
        if (lane == 0u && n < n_rows) {
            var s = 1.0;
            if (BITS == 8u) { s = scale(n); }
            acc_out[(i % NB) * n_rows + n] = total * s;
        }
    }
}

@compute @workgroup_size(WG)
fn gemv_pack(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    if (touch() == 0u) { return; }
    let i = (wid.x + wid.y * nwg.x) * WG + lid;  // word of y: elements 2i, 2i+1 of the flat [B, N]
    let total = p.total;
    if (2u * i >= total) { return; }
    var hi = 0u;
    if (2u * i + 1u < total) { hi = enc16(acc_out[2u * i + 1u]); }
    y[i] = enc16(acc_out[2u * i]) | (hi << 16u);
}

@compute @workgroup_size(WG)
fn dequant_lowbit(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    if (touch() == 0u) { return; }
    let i = (wid.x + wid.y * nwg.x) * WG + lid;  // word of wd: row n, k = 2·(i mod K/2)
    let k_len = p.k;
    if (i >= p.n * (k_len / 2u)) { return; }
    let n = i / (k_len / 2u);
    let k = 2u * (i % (k_len / 2u));
    var q0: f32;
    var q1: f32;
    var s: f32;
    if (BITS == 4u) {
        let byte_i = n * (k_len / 2u) + k / 2u;
        let byte = (wword(byte_i >> 2u) >> (8u * (byte_i & 3u))) & 0xffu;
        q0 = f32(i32(byte & 15u) - 8);
        q1 = f32(i32(byte >> 4u) - 8);
        s = scale(n * (k_len / GROUP) + k / GROUP);
    } else {
        let byte_i = n * k_len + k;  // even: k and k+1 share a word
        let u = wpre(wword(byte_i >> 2u));
        let hi = whi(u);
        q0 = wval(u, hi, byte_i & 3u);
        q1 = wval(u, hi, (byte_i & 3u) + 1u);
        s = scale(n);
    }
    wd[i] = enc16(q0 * s) | (enc16(q1 * s) << 16u);
}
