// gemv_lowbit_dp4a.wgsl — fused_dp4a (w4a16) in WGSL: the scheme of gemv_lowbit.cu's
// gemv_lowbit_dp4a with WGSL's packed 4×8-bit dot products (dot4U8Packed, dot4I8Packed: core
// WGSL built-ins, DP4A where the driver has one). x per scale group in fixed point, M =
// round(x·2^(148 − eb)) with eb the f32 biased exponent of the group's max |x| (at least 22), so
// |M| < 2^22; M = d0 + 2^8·d1 + 2^16·d2 (d0, d1 unsigned bytes, d2 signed) as byte planes in
// workgroup memory. Weights stay offset-binary nibbles (q + 8): per 32-bit word lo = w & 0x0F0F0F0F
// (k 0, 2, 4, 6), hi = (w >> 4) & 0x0F0F0F0F (k 1, 3, 5, 7) and six dot products into exact
// integer plane sums; per 16-byte unit (32 k) and row Σ q·M = P0 + 2^8·P1 + 2^16·P2 − 8·Σ M
// (|·| ≤ 2^30, exact in i32), one i32 → f32 and one FMA with the group scale × 2^(eb − 148).
//
// Workgroups are persistent (grid-stride over tiles of RPT rows per team of 32; every team of a
// workgroup runs the same trip count, the team sums use barriers); each first converts x of one
// chunk of CU units (32 k each) into workgroup memory (four invocations per unit, eight values
// each) — the chunk is what fits the device's workgroup storage — and adds its partial row sums
// to acc_out (fp32 [B, N]: chunk 0 stores, later chunks add), which gemv_lowbit.wgsl's gemv_pack
// rounds to 16-bit words.
//
// Team sums: SG 0, a workgroup-memory tree per value (7 barriers each); SG 1 (adapter feature
// "subgroup"), a butterfly of subgroupShuffleXor within min(subgroup size, 32) lanes, those partials
// through workgroup memory four values at a time (2 barriers per four values). Subgroups are taken
// to be consecutive runs of local_invocation_index (as in reduction_subgroup.wgsl); any size from 4
// works (a team spans several subgroups, or a subgroup several teams). SG 2 (same feature): a team
// is one subgroup (its lanes stride the units by the subgroup size), its sums are subgroupAdd and
// its first lane stores them; teams take their own trip counts, so the tile loop has no barrier
// at all. PF 1: each step's weight words and scales are loaded one step ahead (issued before the
// step's dot products). ST 1 (SG 2, RPT even, N even or NB 1): the last chunk rounds its sums (plus
// the earlier chunks' in acc_out) and stores y's 16-bit pairs itself, so no gemv_pack dispatch
// follows (a team owns both rows of each pair it stores). LP 1: one dispatch walks every chunk
// (x converted again after a workgroup barrier; a team adds to the acc_out sums it stored itself,
// the tiles being dealt alike in every chunk) instead of a dispatch per chunk. RL 1: the weights
// and scales come repacked once per weight set (kernels.py: wgsl_rows_layout), so that a team's
// tile is one contiguous stream: words as [tile][unit / BW][row][unit % BW] (BW units, the team
// width where K allows: each row's load instruction reads BW·16 contiguous bytes, a step's RPT
// rows BW·16·RPT), scales as [tile][group][row]; rows past N are zeros. RL 2: the same blocks
// K-major, [unit / BW][tile][row][unit % BW] and [group][tile][row], so that the teams' steps
// read one contiguous slab of the weights at a time, as a grid-stride read does. DIAG (probes
// only, wrong results by design): 1 skips x's conversion, 2 also the dot products (each step's
// words only folded into the sums: the weight stream alone).
//
// Placeholders: NB (batch), DT (1 fp16, 2 bf16), RPT (rows per team), TEAMS (teams of 32 per
// workgroup), CU (units per chunk, a multiple of 4), SG (0/1/2), PF, ST, LP (0/1), RL (0/1/2), BW
// (RL's block), DIAG and, from SG, SG_ARG (the entry's subgroup_size parameter or nothing),
// SG_SIZE (its name or 32u), XOR (subgroupShuffleXor(v, m) or v), ADD (subgroupAdd(v) or v):
// text, since a module naming a subgroup built-in needs the feature. Bindings: wq (vec4<u32>
// rows, or RL's blocks), sc (16-bit scale pairs), xs (x as vec4<u32>, 8 values each), acc_out, y
// (16-bit pairs, ST 1), params (n, k, chunk index, chunks).

struct Params { n: u32, k: u32, chunk: u32, chunks: u32 }

@group(0) @binding(0) var<storage, read> wq: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> sc: array<u32>;
@group(0) @binding(2) var<storage, read> xs: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> acc_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<u32>;
@group(0) @binding(5) var<uniform> p: Params;

const NB: u32 = {{NB}}u;
const DT: u32 = {{DT}}u;
const RPT: u32 = {{RPT}}u;
const TEAMS: u32 = {{TEAMS}}u;
const CU: u32 = {{CU}}u;
const WG: u32 = 32u * TEAMS;
const RN: u32 = RPT * NB;
const SG: u32 = {{SG}}u;
const PF: u32 = {{PF}}u;
const ST: u32 = {{ST}}u;
const LP: u32 = {{LP}}u;
const RL: u32 = {{RL}}u;
const BW: u32 = {{BW}}u;
const DIAG: u32 = {{DIAG}}u;

var<workgroup> xpl: array<vec4<u32>, NB * 6u * CU>;  // [NB][plane][lo/hi words 0-3, 4-7][CU]
var<workgroup> sm8: array<i32, NB * CU>;            // 8·Σ M per unit
var<workgroup> fgr: array<f32, NB * CU / 4u>;       // 2^(eb − 148) per group (NaN: NaN/Inf in it)
var<workgroup> amx: array<f32, WG>;                 // a pass's per-unit max |x| (−1: NaN/Inf)
var<workgroup> red: array<f32, WG>;
var<workgroup> smq: array<i32, WG>;                 // a pass's Σ M per quarter unit

#include "f16.wgsl"

// 16-bit value i of an array of u32 pairs as f32 (exact)
fn half_at(w: u32, i: u32) -> f32 { return h2f(w >> (16u * (i & 1u))); }

fn scale(i: u32) -> f32 { return half_at(sc[i >> 1u], i); }

// lane ^ m's v within the subgroup (SG 1; SG 0 never calls it)
fn lane_xor(v: f32, m: u32) -> f32 { return {{XOR}}; }

// v summed over the subgroup (SG 2 only)
fn team_add(v: f32) -> f32 { return {{ADD}}; }

// a team's RPT rows at unit uc of the chunk: weight words and group scales
struct Tile { w: array<vec4<u32>, RPT>, s: array<f32, RPT> }

fn load_tile(t: u32, uc: u32, chunk: u32) -> Tile {
    var o: Tile;
    let upr = p.k / 32u;
    let gpr = p.k / 128u;
    let u = chunk * CU + uc;
    // RL 1 and 2: tile t's blocks (SG 0 and 1 run teams past the last tile: they read the last one)
    let tiles = (p.n + RPT - 1u) / RPT;
    let tt = min(t, tiles - 1u);
    // @unroll
    for (var r = 0u; r < RPT; r++) {
        if (RL == 1u) {
            o.w[r] = wq[((tt * (upr / BW) + u / BW) * RPT + r) * BW + u % BW];
            o.s[r] = scale((tt * gpr + u / 4u) * RPT + r);
        } else if (RL == 2u) {
            o.w[r] = wq[((u / BW * tiles + tt) * RPT + r) * BW + u % BW];
            o.s[r] = scale((u / 4u * tiles + tt) * RPT + r);
        } else {
            let n = min(t * RPT + r, p.n - 1u);  // rows past N recompute row N-1, never stored
            o.w[r] = wq[n * upr + u];
            o.s[r] = scale(n * gpr + u / 4u);
        }
    }
    return o;
}

// sum i (row t·RPT + i / NB, batch row i % NB) of tile t into acc_out: chunk 0 stores, later ones add
fn put_sum(i: u32, t: u32, tiles: u32, total: f32, chunk: u32) {
    let n = t * RPT + i / NB;
    if (t < tiles && n < p.n) {
        let o = (i % NB) * p.n + n;
        acc_out[o] = select(total, acc_out[o] + total, chunk > 0u);
    }
}

// ST 1: row n of batch row b (its sum over this chunk: total) as the final fp32 value, 0 past N
fn final_sum(b: u32, n: u32, total: f32, chunk: u32) -> f32 {
    if (n >= p.n) { return 0.0; }
    let o = b * p.n + n;
    return select(total, acc_out[o] + total, chunk > 0u);
}

// bytes p of a, b, c, d (a's the lowest)
fn pick4(a: i32, b: i32, c: i32, d: i32, p: u32) -> u32 {
    let s = 8u * p;
    return ((u32(a) >> s) & 0xffu) | (((u32(b) >> s) & 0xffu) << 8u) | (((u32(c) >> s) & 0xffu) << 16u)
        | (((u32(d) >> s) & 0xffu) << 24u);
}

// one step of a tile: its RPT rows' unit uc (the words and scales in cur) against x's planes of
// every batch row, into acc
fn dot_step(cur: Tile, uc: u32, acc: ptr<function, array<f32, RN>>) {
    let w = cur.w;
    let s = cur.s;
    if (DIAG == 2u) {
        // @unroll
        for (var r = 0u; r < RPT; r++) {
            let v = w[r].x ^ w[r].y ^ w[r].z ^ w[r].w;
            (*acc)[r * NB] = fma(f32(v & 0xffu), s[r], (*acc)[r * NB]);
        }
        return;
    }
    // @unroll
    for (var b = 0u; b < NB; b++) {
        let x0a = xpl[((b * 3u) * 2u) * CU + uc];
        let x0b = xpl[((b * 3u) * 2u + 1u) * CU + uc];
        let x1a = xpl[((b * 3u + 1u) * 2u) * CU + uc];
        let x1b = xpl[((b * 3u + 1u) * 2u + 1u) * CU + uc];
        let x2a = xpl[((b * 3u + 2u) * 2u) * CU + uc];
        let x2b = xpl[((b * 3u + 2u) * 2u + 1u) * CU + uc];
        let f = fgr[b * (CU / 4u) + uc / 4u];
        let s8 = sm8[b * CU + uc];
        // @unroll
        for (var r = 0u; r < RPT; r++) {
            var p0 = 0u;
            var p1 = 0u;
            var p2 = 0i;
            // @unroll
            for (var j = 0u; j < 4u; j++) {
                let lo = w[r][j] & 0x0f0f0f0fu;
                let hi = (w[r][j] >> 4u) & 0x0f0f0f0fu;
                let h = j / 2u;
                let o = 2u * (j % 2u);
                let xl0 = select(x0a, x0b, h == 1u);
                let xl1 = select(x1a, x1b, h == 1u);
                let xl2 = select(x2a, x2b, h == 1u);
                p0 += dot4U8Packed(lo, xl0[o]) + dot4U8Packed(hi, xl0[o + 1u]);
                p1 += dot4U8Packed(lo, xl1[o]) + dot4U8Packed(hi, xl1[o + 1u]);
                p2 += dot4I8Packed(lo, xl2[o]) + dot4I8Packed(hi, xl2[o + 1u]);
            }
            let tq = bitcast<i32>(p0 + (p1 << 8u) + (bitcast<u32>(p2) << 16u) - bitcast<u32>(s8));
            (*acc)[r * NB + b] = fma(f32(tq), s[r] * f, (*acc)[r * NB + b]);
        }
    }
}

@compute @workgroup_size(WG)
fn gemv_lowbit_dp4a(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                    @builtin(num_workgroups) nwg: vec3<u32>{{SG_ARG}}) {
    let g = wid.x + wid.y * nwg.x;
    let ng = nwg.x * nwg.y;
    let tsz = select(32u, {{SG_SIZE}}, SG == 2u);  // lanes per team: SG 2's teams are subgroups
    let lane = lid % tsz;
    let team = lid / tsz;
    let n_rows = p.n;
    let k_len = p.k;
    let tiles = (n_rows + RPT - 1u) / RPT;
    let nt = WG / tsz * ng;  // teams in the grid
    let gt = team * ng + g;  // this team, dealt team-major over the workgroups
    // SG 0 and 1: every team of the workgroup runs the same trip count (team 0's tiles decide;
    // the sums below have barriers); a team past the last tile computes clamped rows and stores
    // nothing. SG 2: each team its own (no barriers).
    let g0 = select(g, gt, SG == 2u);
    // LP 0: this dispatch's chunk p.chunk; LP 1: every chunk in turn (one dispatch)
    let c_end = select(p.chunk + 1u, p.chunks, LP == 1u);
    for (var chunk = p.chunk; chunk < c_end; chunk++) {
        let u0 = chunk * CU;
        // the previous chunk's tiles are done with xpl, fgr and sm8 before they are overwritten
        workgroupBarrier();
        // convert: four invocations per (batch row, unit) of the chunk, eight values each
        for (var base = 0u; base < select(NB * CU * 4u, 0u, DIAG > 0u); base += WG) {
            let i = base + lid;
            let b = min(i / (4u * CU), NB - 1u);
            let uc = (i / 4u) % CU;
            let qt = i % 4u;  // values 8·qt … 8·qt + 7 of the unit
            let q = xs[(b * k_len + 32u * (u0 + uc)) / 8u + qt];
            var amax = 0.0;
            var bad = false;
            // @unroll
            for (var e = 0u; e < 8u; e++) {
                let f = half_at(q[e / 2u], e);
                amax = max(amax, abs(f));
                bad = bad || ((bitcast<u32>(f) & 0x7f800000u) == 0x7f800000u);
            }
            amx[lid] = select(amax, -1.0, bad);
            workgroupBarrier();
            let q0 = lid & ~15u;  // the group's 16 invocations: 4 units × 4 quarters
            var gmax = 0.0;
            var nonfinite = false;
            // @unroll
            for (var h = 0u; h < 16u; h++) {
                let a = amx[q0 + h];
                gmax = max(gmax, a);
                nonfinite = nonfinite || a < 0.0;
            }
            workgroupBarrier();
            if (i < NB * CU * 4u) {
                let eb = max(22u, bitcast<u32>(gmax) >> 23u);
                let cs = bitcast<f32>((275u - eb) << 23u);  // 2^(148 − eb)
                var m: array<i32, 8>;
                var sum = 0i;
                // @unroll
                for (var e = 0u; e < 8u; e++) {
                    let f = half_at(q[e / 2u], e);
                    m[e] = bitcast<i32>(bitcast<u32>(fma(f, cs, 12582912.0)) - 0x4b400000u);  // round(f·cs)
                    sum += m[e];
                }
                let c = 2u * (qt % 2u);
                // @unroll
                for (var pl = 0u; pl < 3u; pl++) {
                    let o = ((b * 3u + pl) * 2u + qt / 2u) * CU + uc;
                    xpl[o][c] = pick4(m[0], m[2], m[4], m[6], pl);
                    xpl[o][c + 1u] = pick4(m[1], m[3], m[5], m[7], pl);
                }
                smq[lid] = sum;
                if ((i & 15u) == 0u) {
                    fgr[b * (CU / 4u) + uc / 4u] = select(bitcast<f32>((eb - 21u) << 23u),
                                                          bitcast<f32>(0x7fc00000u), nonfinite);
                }
            }
            workgroupBarrier();
            if (i < NB * CU * 4u && qt == 0u) {
                sm8[b * CU + uc] = 8i * (smq[lid] + smq[lid + 1u] + smq[lid + 2u] + smq[lid + 3u]);
            }
        }
        workgroupBarrier();
        for (var it = 0u; it * nt + g0 < tiles; it++) {
            let t = it * nt + gt;
            var acc: array<f32, RN>;
            // @unroll
            for (var i = 0u; i < RN; i++) { acc[i] = 0.0; }
            var nxt: Tile;
            if (PF == 1u && lane < CU) { nxt = load_tile(t, lane, chunk); }
            for (var uc = lane; uc < CU; uc += tsz) {
                var cur: Tile;
                if (PF == 1u) {
                    cur = nxt;
                    if (uc + tsz < CU) { nxt = load_tile(t, uc + tsz, chunk); }
                } else {
                    cur = load_tile(t, uc, chunk);
                }
                dot_step(cur, uc, &acc);
            }
            if (SG == 2u) {
                var tot: array<f32, RN>;
                // @unroll
                for (var i = 0u; i < RN; i++) { tot[i] = team_add(acc[i]); }
                // arrayLength: y stays a binding of the module at ST 0 (naga drops a global that only a
                // branch it folds away names; the launch binds y at every ST)
                if (ST == 1u && chunk + 1u == p.chunks && arrayLength(&y) > 0u) {
                    // @unroll
                    for (var h = 0u; h < RPT / 2u; h++) {
                        // @unroll
                        for (var b = 0u; b < NB; b++) {
                            let n = t * RPT + 2u * h;
                            if (lane == 0u && t < tiles && n < p.n) {
                                let lo = final_sum(b, n, tot[2u * h * NB + b], chunk);
                                let hi = final_sum(b, n + 1u, tot[(2u * h + 1u) * NB + b], chunk);
                                y[(b * p.n + n) / 2u] = enc16(lo) | (enc16(hi) << 16u);
                            }
                        }
                    }
                } else {
                    // @unroll
                    for (var i = 0u; i < RN; i++) {
                        if (lane == 0u) { put_sum(i, t, tiles, tot[i], chunk); }
                    }
                }
            } else if (SG == 1u) {
                // lanes one butterfly sums: a subgroup, at most a team
                let unit = min({{SG_SIZE}}, 32u);
                let per = 32u / unit;  // partials per team
                // @unroll
                for (var q = 0u; q < (RN + 3u) / 4u; q++) {
                    // @unroll
                    for (var j = 0u; j < 4u; j++) {
                        var v = acc[min(4u * q + j, RN - 1u)];
                        // @unroll
                        for (var e = 0u; e < 5u; e++) {
                            let m = 1u << e;
                            v += select(0.0, lane_xor(v, m), m < unit);
                        }
                        if (lid % unit == 0u) { red[(lid / unit) * 4u + j] = v; }
                    }
                    workgroupBarrier();
                    let i = 4u * q + lane;
                    if (lane < 4u && i < RN) {
                        var total = 0.0;
                        for (var h = 0u; h < per; h++) { total += red[(team * per + h) * 4u + lane]; }
                        put_sum(i, t, tiles, total, chunk);
                    }
                    workgroupBarrier();
                }
            } else {
                // @unroll
                for (var i = 0u; i < RN; i++) {
                    red[lid] = acc[i];
                    workgroupBarrier();
                    for (var o = 16u; o > 0u; o >>= 1u) {
                        if (lane < o) { red[lid] += red[lid + o]; }
                        workgroupBarrier();
                    }
                    let total = red[team * 32u];
                    workgroupBarrier();
                    if (lane == 0u) { put_sum(i, t, tiles, total, chunk); }
                }
            }
        }
    }
}
