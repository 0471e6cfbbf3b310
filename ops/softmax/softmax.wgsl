// softmax.wgsl — y = exp(x − max) / Σ exp(x − max) along each row of a row-major [M, N] matrix.
// Bytes: M·N·itemsize read + the same written (multi-read entries read x two or three times).
// Flops: ~5·M·N. fp32 math; exp is exp2((x − m)·log2 e) ("no value yet" is −FLT_MAX, so no
// −inf − (−inf) = NaN).
//
// Thread → data: one workgroup of TPB invocations per row (linear workgroup id r = wid.x +
// wid.y·nwg.x: 2-D grids past 65535 rows), or per part of a row (split). A row is cut into
// units: XT words of the raw buffers (x and y are bound as words; WGSL has no 16-bit type):
// fp32 vec4<u32> (4 values, 16 bytes) or u32 (1); bf16 vec4<u32> (8 values) or u32 (2 values:
// rows start on a word only for even N: odd-N bf16 runs these entries in fp32 between
// bf16_flat.wgsl's widen and narrow, see kernels.py). Unit u of
// row r is word r·NU + u; invocation lid takes units lid, lid+TPB, ... (coalesced).
//
// Placeholders: TPB, ITEMS (units per invocation in the register tile), UNIT (values per unit),
// XT (vec4<u32> | u32), UNPACK / PACK (function bodies that turn a unit's words into values and
// back; bf16 rounds to nearest even), FITS (true | false), SPIN (split_wait's poll bound), POLL
// (how split_wait reads a sibling's slot: poll_rmw | poll_load, see below).
//
//   softmax_three_pass  a max loop, a Σ exp loop, a write loop over the row (three reads)
//   softmax_rows        FITS: the row is loaded into the invocations' registers once, max and
//                       Σ exp are reduced in workgroup memory, y is written from registers (one
//                       read). !FITS: a streaming loop keeps a running max and a rescaled sum
//                       per invocation (online), combined, then a re-read writes y (two reads).
//   softmax_split_wait  split_row, one dispatch (where a part fits the register tile): workgroups
//                       take tickets in start order (atomic counter), ticket t → row r0 + t / G,
//                       part t % G; each holds its part in registers, publishes its (max, Σ exp)
//                       as two u32 words (float bits; the empty slot is SENT, a NaN no partial
//                       has), and invocation k < G polls part k's words of its row (its own
//                       part's from registers). WebGPU
//                       promises no forward progress between workgroups, so the poll is bounded
//                       (SPIN reads): a workgroup whose siblings do not all appear in time puts its
//                       ticket on a pending list and ends without writing. With all G partials
//                       it combines them in part order (bitwise the same in every part) and
//                       writes y from registers: one read of x, as on cuda/opencl.
//   softmax_split_fixup dispatch 2 of the same pair, a few workgroups: the pending tickets (none
//                       where the device ran the row's parts together), each re-reading its part.
//                       It also leaves the state clean for the next launch: its last workgroup
//                       (every pending part is done) empties the dispatch's slots and resets the
//                       ticket. So a part takes one atomic with a result (its ticket) and ends
//                       right after its stores, as on cuda (no counters on the way out: each
//                       would cost its workgroup a round trip to L2 before it retires).
//   softmax_part_stats  split where a part does not fit the register tile or the adapter is a CPU
//                       (lavapipe: few workgroups at a time, most parts would give up), dispatch 1:
//                       workgroup (r − r0)·G + p streams part p of row r → (max, Σ exp) slots
//   softmax_part_write  dispatch 2: combines the G partials of its row in part order and
//                       re-reads its part to write y.
//                       Each pair runs for rows [r0, m): all rows, or a batch of them
//                       (a window of x and y above the storage-binding limit, or a probe's
//                       L2-sized batches: kernels.py WGSL_SPLIT_BATCH_BYTES)
//
// `part` words (split): [0, 2·M·G) the (max, Σ) slots of row r part k at 2(rG + k); ctl = 2·M·G:
// ticket, parts deferred since allocation (never reset: a probe's counter), pending count, fixup
// done count; ctl + 4 ...: the pending tickets.

// m: end row of this dispatch (all rows: M); r0: its first row (split: a batch of rows, see
// kernels.py; the other entries run all rows with r0 = 0); ctl: a word offset in `part`
struct Params { m: u32, nu: u32, chunk: u32, g: u32, r0: u32, ctl: u32, pad0: u32, pad1: u32 }

@group(0) @binding(0) var<storage, read> x: array<{{XT}}>;
@group(0) @binding(1) var<storage, read_write> y: array<{{XT}}>;
@group(0) @binding(2) var<storage, read_write> part: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;

alias V = array<f32, {{UNIT}}>;
const LOG2E: f32 = 1.4426950408889634;
const NEG: f32 = -3.4028234663852886e38;
const SENT: u32 = 0xffffffffu;  // an empty (max, Σ) slot: a NaN that no partial is

var<workgroup> scr: array<f32, {{TPB}}>;

fn neg_inf() -> f32 { return bitcast<f32>(0xff800000u); }
fn bf16_lo(w: u32) -> f32 { return bitcast<f32>(w << 16u); }
fn bf16_hi(w: u32) -> f32 { return bitcast<f32>(w & 0xffff0000u); }
fn to_bf16(f: f32) -> u32 {  // nearest, ties to even (outputs are finite)
    let u = bitcast<u32>(f);
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}

fn unpack(w: {{XT}}) -> V { {{UNPACK}} }
fn pack(v: V) -> {{XT}} { {{PACK}} }

// unit u (< uend) of the row whose first word is base; −inf past the end
fn load_unit(base: u32, u: u32, uend: u32) -> V {
    if (u < uend) { return unpack(x[base + u]); }
    var v: V;
    // @unroll
    for (var j = 0u; j < {{UNIT}}u; j++) { v[j] = neg_inf(); }
    return v;
}

fn store_unit(base: u32, u: u32, v: V, m: f32, inv: f32) {
    var e: V;
    // @unroll
    for (var j = 0u; j < {{UNIT}}u; j++) { e[j] = exp2((v[j] - m) * LOG2E) * inv; }
    y[base + u] = pack(e);
}

fn reduce_max(v: f32, lid: u32) -> f32 {
    scr[lid] = v;
    workgroupBarrier();
    for (var s = {{TPB}}u / 2u; s > 0u; s = s / 2u) {
        if (lid < s) { scr[lid] = max(scr[lid], scr[lid + s]); }
        workgroupBarrier();
    }
    let r = scr[0];
    workgroupBarrier();  // scr is reused
    return r;
}

fn reduce_sum(v: f32, lid: u32) -> f32 {
    scr[lid] = v;
    workgroupBarrier();
    for (var s = {{TPB}}u / 2u; s > 0u; s = s / 2u) {
        if (lid < s) { scr[lid] = scr[lid] + scr[lid + s]; }
        workgroupBarrier();
    }
    let r = scr[0];
    workgroupBarrier();
    return r;
}

struct Stats { m: f32, s: f32 }

// running (max, Σ): one exp2 per value, the rescale only on a new max
fn online_add(st: Stats, xv: f32) -> Stats {
    if (xv > st.m) { return Stats(xv, st.s * exp2((st.m - xv) * LOG2E) + 1.0); }
    return Stats(st.m, st.s + exp2((xv - st.m) * LOG2E));
}

// streams units [u0, uend) of a row: (max, Σ exp) over the workgroup
fn stream_stats(base: u32, u0: u32, uend: u32, lid: u32) -> Stats {
    var st = Stats(NEG, 0.0);
    for (var u = u0 + lid; u < uend; u += {{TPB}}u) {
        let v = load_unit(base, u, uend);
        // @unroll
        for (var j = 0u; j < {{UNIT}}u; j++) { st = online_add(st, v[j]); }
    }
    let m = reduce_max(st.m, lid);
    let s = reduce_sum(st.s * exp2((st.m - m) * LOG2E), lid);  // st.m = NEG (nothing seen): 0
    return Stats(m, s);
}

fn stream_write(base: u32, u0: u32, uend: u32, lid: u32, m: f32, inv: f32) {
    for (var u = u0 + lid; u < uend; u += {{TPB}}u) { store_unit(base, u, load_unit(base, u, uend), m, inv); }
}

@compute @workgroup_size({{TPB}})
fn softmax_three_pass(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let r = wid.x + wid.y * nwg.x;
    if (p.g == 0u) { atomicStore(&part[0], 0u); }  // never (g ≥ 1): every entry names every binding (one layout)
    var uend = 0u;
    if (r < p.m) { uend = p.nu; }  // a workgroup past the last row only joins the barriers
    let base = r * p.nu;
    var m = NEG;
    for (var u = lid; u < uend; u += {{TPB}}u) {
        let v = load_unit(base, u, uend);
        // @unroll
        for (var j = 0u; j < {{UNIT}}u; j++) { m = max(m, v[j]); }
    }
    m = reduce_max(m, lid);
    var s = 0.0;
    for (var u = lid; u < uend; u += {{TPB}}u) {
        let v = load_unit(base, u, uend);
        // @unroll
        for (var j = 0u; j < {{UNIT}}u; j++) { s += exp2((v[j] - m) * LOG2E); }
    }
    s = reduce_sum(s, lid);
    stream_write(base, 0u, uend, lid, m, 1.0 / s);
}

@compute @workgroup_size({{TPB}})
fn softmax_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let r = wid.x + wid.y * nwg.x;
    if (p.g == 0u) { atomicStore(&part[0], 0u); }  // never: names the binding
    var uend = 0u;
    if (r < p.m) { uend = p.nu; }
    let base = r * p.nu;
    if ({{FITS}}) {
        var v: array<V, {{ITEMS}}>;
        var m = NEG;
        // @unroll
        for (var k = 0u; k < {{ITEMS}}u; k++) {
            v[k] = load_unit(base, k * {{TPB}}u + lid, uend);
            // @unroll
            for (var j = 0u; j < {{UNIT}}u; j++) { m = max(m, v[k][j]); }
        }
        m = reduce_max(m, lid);
        var s = 0.0;
        // @unroll
        for (var k = 0u; k < {{ITEMS}}u; k++) {
            // @unroll
            for (var j = 0u; j < {{UNIT}}u; j++) { s += exp2((v[k][j] - m) * LOG2E); }
        }
        let inv = 1.0 / reduce_sum(s, lid);
        // @unroll
        for (var k = 0u; k < {{ITEMS}}u; k++) {
            let u = k * {{TPB}}u + lid;
            if (u < uend) { store_unit(base, u, v[k], m, inv); }
        }
    } else {
        let st = stream_stats(base, 0u, uend, lid);
        stream_write(base, 0u, uend, lid, st.m, 1.0 / st.s);
    }
}

@compute @workgroup_size({{TPB}})
fn softmax_part_stats(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let t = wid.x + wid.y * nwg.x;
    if (p.g == 0u) { y[0] = x[0]; }  // never: names the binding
    let r = p.r0 + t / p.g;
    let u0 = (t % p.g) * p.chunk;
    var uend = 0u;
    if (r < p.m) { uend = min(p.nu, u0 + p.chunk); }
    let st = stream_stats(r * p.nu, u0, uend, lid);
    if (lid == 0u && r < p.m) {
        let q = r * p.g + t % p.g;
        atomicStore(&part[2u * q], bitcast<u32>(st.m));
        atomicStore(&part[2u * q + 1u], bitcast<u32>(st.s));
    }
}

@compute @workgroup_size({{TPB}})
fn softmax_part_write(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
    let t = wid.x + wid.y * nwg.x;
    let r = p.r0 + t / p.g;
    if (r >= p.m) { return; }  // no barriers below
    let u0 = (t % p.g) * p.chunk;
    let uend = min(p.nu, u0 + p.chunk);
    let b = 2u * r * p.g;
    var m = NEG;
    for (var k = 0u; k < p.g; k++) { m = max(m, bitcast<f32>(atomicLoad(&part[b + 2u * k]))); }
    var s = 0.0;
    for (var k = 0u; k < p.g; k++) {
        s += bitcast<f32>(atomicLoad(&part[b + 2u * k + 1u])) * exp2((bitcast<f32>(atomicLoad(&part[b + 2u * k])) - m) * LOG2E);
    }
    stream_write(r * p.nu, u0, uend, lid, m, 1.0 / s);
}

var<workgroup> wtk: u32;
var<workgroup> wmiss: u32;

// the G partials of a row, (max, Σ) at scr[2k], scr[2k + 1], combined in part order
fn combine(g: u32) -> Stats {
    var m = scr[0];
    for (var k = 1u; k < g; k++) { m = max(m, scr[2u * k]); }
    var s = 0.0;
    for (var k = 0u; k < g; k++) { s += scr[2u * k + 1u] * exp2((scr[2u * k] - m) * LOG2E); }
    return Stats(m, s);
}

// the ticket of this workgroup (all invocations), in start order
fn take_ticket(lid: u32) -> u32 {
    if (lid == 0u) {
        wtk = atomicAdd(&part[p.ctl], 1u);
        wmiss = 0u;
    }
    return workgroupUniformLoad(&wtk);
}

// publishes part k of row r's (m, s) and polls its row's G slots (at most SPIN reads each) into
// scr for `combine`; false: a sibling did not appear in time (or r is past the last row)
fn exchange(r: u32, k: u32, m: f32, s: f32, lid: u32) -> bool {
    let q = 2u * r * p.g;
    if (lid == 0u && r < p.m) {
        atomicStore(&part[q + 2u * k], bitcast<u32>(m));
        atomicStore(&part[q + 2u * k + 1u], bitcast<u32>(s));
    }
    if (lid < p.g && r < p.m) {
        var a = bitcast<u32>(m);  // this part's own, from registers
        var b = bitcast<u32>(s);
        for (var it = 0u; it < {{SPIN}}u && lid != k; it++) {
            a = {{POLL}}(q + 2u * lid);
            b = {{POLL}}(q + 2u * lid + 1u);
            if (a != SENT && b != SENT) { break; }
        }
        if (a == SENT || b == SENT) { wmiss = 1u; }
        scr[2u * lid] = bitcast<f32>(a);
        scr[2u * lid + 1u] = bitcast<f32>(b);
    }
    let miss = workgroupUniformLoad(&wmiss);  // a barrier: scr, wmiss and every slot read are done
    return miss == 0u && r < p.m;
}

// a slot read: on the H200's Vulkan driver an atomic RMW returns far sooner under load than
// atomicLoad (4096×131072: 75.2 against 64.4 %; at 16384², one part per row, atomicLoad of the
// own slot cost 15 points: probes-20261202-session9); poll_load stays for other devices' probes
fn poll_load(i: u32) -> u32 { return atomicLoad(&part[i]); }
fn poll_rmw(i: u32) -> u32 { return atomicOr(&part[i], 0u); }

// ticket t leaves its part to the fixup dispatch (one invocation calls it)
fn defer_part(t: u32) {
    atomicStore(&part[p.ctl + 4u + atomicAdd(&part[p.ctl + 2u], 1u)], t);
    atomicAdd(&part[p.ctl + 1u], 1u);
}

@compute @workgroup_size({{TPB}})
fn softmax_split_wait(@builtin(local_invocation_index) lid: u32) {
    let t = take_ticket(lid);
    let r = p.r0 + t / p.g;  // tickets past the last part (2-D grid padding): no row, nothing to do
    let k = t % p.g;
    let u0 = k * p.chunk;
    var uend = 0u;
    if (r < p.m) { uend = min(p.nu, u0 + p.chunk); }
    let base = r * p.nu;
    var v: array<V, {{ITEMS}}>;
    var m = NEG;
    // @unroll
    for (var i = 0u; i < {{ITEMS}}u; i++) {
        v[i] = load_unit(base, u0 + i * {{TPB}}u + lid, uend);
        // @unroll
        for (var j = 0u; j < {{UNIT}}u; j++) { m = max(m, v[i][j]); }
    }
    m = reduce_max(m, lid);
    var s = 0.0;
    // @unroll
    for (var i = 0u; i < {{ITEMS}}u; i++) {
        // @unroll
        for (var j = 0u; j < {{UNIT}}u; j++) { s += exp2((v[i][j] - m) * LOG2E); }
    }
    s = reduce_sum(s, lid);  // ends with a barrier: scr is free
    if (exchange(r, k, m, s, lid)) {
        let st = combine(p.g);
        let inv = 1.0 / st.s;
        // @unroll
        for (var i = 0u; i < {{ITEMS}}u; i++) {
            let u = u0 + i * {{TPB}}u + lid;
            if (u < uend) { store_unit(base, u, v[i], st.m, inv); }
        }
    } else if (lid == 0u && r < p.m) {
        defer_part(t);
    }
}

var<workgroup> wpend: u32;
var<workgroup> wlast: u32;

@compute @workgroup_size({{TPB}})
fn softmax_split_fixup(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                       @builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) { wpend = atomicLoad(&part[p.ctl + 2u]); }
    let n = workgroupUniformLoad(&wpend);
    for (var i = wid.x; i < n; i += nwg.x) {
        if (lid == 0u) { wtk = atomicLoad(&part[p.ctl + 4u + i]); }
        let t = workgroupUniformLoad(&wtk);
        let r = p.r0 + t / p.g;
        let u0 = (t % p.g) * p.chunk;
        if (lid < p.g) {  // every part has published: dispatch 1 is over
            scr[2u * lid] = bitcast<f32>(atomicLoad(&part[2u * r * p.g + 2u * lid]));
            scr[2u * lid + 1u] = bitcast<f32>(atomicLoad(&part[2u * r * p.g + 2u * lid + 1u]));
        }
        workgroupBarrier();
        let st = combine(p.g);
        workgroupBarrier();  // scr is reused by the next ticket
        stream_write(r * p.nu, u0, min(p.nu, u0 + p.chunk), lid, st.m, 1.0 / st.s);
    }
    if (lid == 0u) { wlast = select(0u, 1u, atomicAdd(&part[p.ctl + 3u], 1u) == nwg.x - 1u); }
    if (workgroupUniformLoad(&wlast) == 1u) {  // the last one out: every slot read is over
        for (var w = 2u * p.r0 * p.g + lid; w < 2u * p.m * p.g; w += {{TPB}}u) { atomicStore(&part[w], SENT); }
        if (lid == 0u) {
            atomicStore(&part[p.ctl], 0u);
            atomicStore(&part[p.ctl + 2u], 0u);
            atomicStore(&part[p.ctl + 3u], 0u);
        }
    }
}
