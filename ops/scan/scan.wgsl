// scan.wgsl — inclusive prefix sum y[i] = Σ_{j<=i} x[j] (f32 or i32): reduce-then-scan, and a
// single pass with a look-back whose waits are bounded.
// Minimum traffic: read n, write n elements (8·n bytes); reduce-then-scan moves 12·n (x is read
// twice): at most 2/3 of the bandwidth ceiling.
//
// Placeholders: BLOCK (workgroup size, power of two), ITEMS (16-byte vectors per invocation),
// NTOT_PAD (BLOCK·ITEMS + BLOCK·ITEMS/32), T (f32 | i32); the look-back's WINDOW (≤ BLOCK), SPIN,
// POLL (poll_rmw | poll_load) and HIDE (0; tests: tiles j with j & HIDE ≠ 0 never seen published).
// Arrays are bound as raw 16-byte words (array<vec4<u32>>) and bitcast. A tile is ITEMS rows of
// BLOCK consecutive vec4s (4·BLOCK·ITEMS elements); invocation l loads vec4 l of every row
// (coalesced: a row is one contiguous span). Workgroup id g = wid.x + wid.y·nwg.x (2-D grids past
// 65535 groups); indices are u32 (n < 2^32).
//
//   scan_reduce_tiles  sums[g] = Σ tile g (each invocation adds its ITEMS vectors, then a tree in
//                      workgroup memory)                                               read n
//   (the sums are scanned by the same two kernels, level by level, until one tile holds them;
//    the host drives the levels, each level's scan into its own buffer: no aliasing bindings)
//   scan_tiles         serial scan inside each vec4; the BLOCK·ITEMS vec4 totals, in memory order,
//                      go to workgroup memory and are scanned by raking: invocation l scans the
//                      ITEMS consecutive totals [l·ITEMS, (l+1)·ITEMS) serially, Kogge–Stone over
//                      the BLOCK rake totals (double buffer, a barrier per step) gives each rake
//                      its prefix (indices padded by one word per 32 so the stride-ITEMS rakes
//                      hit distinct banks); plus carry[g-1], the inclusive scan of this level's
//                      tile sums                                                read n, write n
//   scan_lookback      one pass (read n, write n): a workgroup takes a ticket (its tile, in start
//                      order), scans the tile as scan_tiles does, publishes the tile's sum (A),
//                      then reads back over a window of WINDOW predecessors, nearest first:
//                      consecutive A sums are added up to the nearest inclusive prefix (P), which
//                      ends the look-back; it then publishes its own P and writes y.
//
// WebGPU promises no forward progress between workgroups (a running workgroup need not be
// scheduled while another spins), so no wait here is unbounded: when the nearest unpublished
// predecessor stays unpublished for SPIN window reads, the workgroup sums that tile from x itself
// (a 4·BLOCK·ITEMS-byte read) and goes on with the one before. The result does not depend on who
// computed a sum (fp32: up to the order of additions).
// WGSL has relaxed 32-bit atomics only (no 64-bit word for value + status, no fence between two
// words), so each published value is two self-describing words: READY | 16 bits of the value.
// A reader takes a value only when both of its words are READY. Tile j's words in `cur`:
// [4j, 4j+1] its sum A, [4j+2, 4j+3] its inclusive prefix P; cur[4·groups] is the ticket counter.
// Two such arrays alternate between launches (the host swaps the bindings): a launch reads and
// writes `cur` and zeroes its tile's words and the counter in `oth`, which the previous launch
// used and the next one will; the host zeroes both once.
//
// The entries use different interfaces at the same bindings (each pipeline's automatic layout
// holds only the variables its entry uses).

struct ReduceParams { n: u32, groups: u32 }
struct ScanParams { n: u32, groups: u32, has_carry: u32 }
struct LookParams { n: u32, groups: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
// scan_reduce_tiles
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<uniform> rp: ReduceParams;
// scan_tiles
@group(0) @binding(1) var<storage, read_write> y: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> carry: array<u32>;
@group(0) @binding(3) var<uniform> sp: ScanParams;
// scan_lookback (y at binding 1)
@group(0) @binding(2) var<storage, read_write> cur: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> oth: array<atomic<u32>>;
@group(0) @binding(4) var<uniform> lp: LookParams;

alias Tile = array<vec4<{{T}}>, {{ITEMS}}>;

var<workgroup> s: array<array<{{T}}, {{BLOCK}}>, 2>;
var<workgroup> tot: array<{{T}}, {{NTOT_PAD}}>;

fn pad(i: u32) -> u32 { return i + (i >> 5u); }

// elements [4i, 4i+4) of x, zero past n (the buffer's padding holds anything)
fn load4(i: u32, n: u32) -> vec4<{{T}}> {
    if (i >= (n + 3u) / 4u) { return vec4<{{T}}>({{T}}(0)); }
    let v = bitcast<vec4<{{T}}>>(x[i]);
    let left = n - 4u * i;
    if (left >= 4u) { return v; }
    return select(vec4<{{T}}>({{T}}(0)), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(left));
}

// Σ of the tile whose invocation-l vec4s start at base (every invocation gets it)
fn tile_sum(base: u32, n: u32, lid: u32) -> {{T}} {
    var acc = vec4<{{T}}>({{T}}(0));
    for (var j = 0u; j < {{ITEMS}}u; j = j + 1u) { acc = acc + load4(base + j * {{BLOCK}}u, n); }
    s[0][lid] = (acc.x + acc.y) + (acc.z + acc.w);
    workgroupBarrier();
    for (var stride = {{BLOCK}}u / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) { s[0][lid] = s[0][lid] + s[0][lid + stride]; }
        workgroupBarrier();  // level k+1 reads what level k wrote
    }
    let total = s[0][0];
    workgroupBarrier();  // s is free again
    return total;
}

// the tile's vec4s scanned in place into v, and in `tot` the inclusive scan of their totals;
// returns the tile's Σ (every invocation gets it)
fn scan_tile(base: u32, n: u32, lid: u32, v: ptr<function, Tile>) -> {{T}} {
    for (var j = 0u; j < {{ITEMS}}u; j = j + 1u) {
        var a = load4(base + j * {{BLOCK}}u, n);
        a.y = a.y + a.x;  // serial scan inside the vec4
        a.z = a.z + a.y;
        a.w = a.w + a.z;
        (*v)[j] = a;
        tot[pad(j * {{BLOCK}}u + lid)] = a.w;
    }
    workgroupBarrier();
    var r = {{T}}(0);  // rake: the ITEMS consecutive totals of this invocation, in place
    for (var k = 0u; k < {{ITEMS}}u; k = k + 1u) {
        let f = pad(lid * {{ITEMS}}u + k);
        r = r + tot[f];
        tot[f] = r;
    }
    var src = 0u;
    s[0][lid] = r;
    workgroupBarrier();
    for (var off = 1u; off < {{BLOCK}}u; off = off * 2u) {  // Kogge–Stone over the rake totals
        var a = s[src][lid];
        if (lid >= off) { a = a + s[src][lid - off]; }
        s[src ^ 1u][lid] = a;
        src = src ^ 1u;
        workgroupBarrier();  // the next step reads every invocation's write
    }
    var rake_prefix = {{T}}(0);
    if (lid > 0u) { rake_prefix = s[src][lid - 1u]; }
    for (var k = 0u; k < {{ITEMS}}u; k = k + 1u) {
        let f = pad(lid * {{ITEMS}}u + k);
        tot[f] = tot[f] + rake_prefix;
    }
    workgroupBarrier();  // tot: inclusive scan of the tile's vec4 totals; read across rakes below
    return tot[pad({{BLOCK}}u * {{ITEMS}}u - 1u)];
}

// y over the tile: v plus carry_in plus the exclusive prefix of its vec4 totals (live: a real tile)
fn write_tile(base: u32, n: u32, lid: u32, v: ptr<function, Tile>, carry_in: {{T}}, live: bool) {
    for (var j = 0u; j < {{ITEMS}}u; j = j + 1u) {
        let f = j * {{BLOCK}}u + lid;
        var prefix = carry_in;
        if (f > 0u) { prefix = prefix + tot[pad(f - 1u)]; }
        let i = base + j * {{BLOCK}}u;
        // the whole last vec4 is written: buffers are padded to 16 bytes, lanes past n are padding
        if (live && 4u * i < n) { y[i] = bitcast<vec4<u32>>((*v)[j] + vec4<{{T}}>(prefix)); }
    }
}

@compute @workgroup_size({{BLOCK}})
fn scan_reduce_tiles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let total = tile_sum(g * ({{BLOCK}}u * {{ITEMS}}u) + lid, rp.n, lid);
    if (lid == 0u && g < rp.groups) { sums[g] = bitcast<u32>(total); }
}

@compute @workgroup_size({{BLOCK}})
fn scan_tiles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let base = g * ({{BLOCK}}u * {{ITEMS}}u) + lid;
    var v: Tile;
    scan_tile(base, sp.n, lid, &v);
    var carry_in = {{T}}(0);
    if (sp.has_carry != 0u && g > 0u) { carry_in = bitcast<{{T}}>(carry[g - 1u]); }
    write_tile(base, sp.n, lid, &v, carry_in, g < sp.groups);
}

// ---- scan_lookback ----

const READY: u32 = 0x10000u;
const HIDE: u32 = {{HIDE}}u;

var<workgroup> wtile: u32;
var<workgroup> wstep: u32;  // lane 0's reading of the window: tiles consumed, | DONE at a P
var<workgroup> wacc: {{T}};  // ... and their Σ
var<workgroup> lb_st: array<u32, {{WINDOW}}>;  // per window lane: 0 not published, 1 A, 2 P
var<workgroup> lb_val: array<{{T}}, {{WINDOW}}>;
const DONE: u32 = 0x80000000u;

// a published value: its two words, each READY | 16 bits
fn publish(i: u32, v: {{T}}) {
    let u = bitcast<u32>(v);
    atomicStore(&cur[i], READY | (u & 0xffffu));
    atomicStore(&cur[i + 1u], READY | (u >> 16u));
}

// a word read: an atomic RMW returned sooner than atomicLoad under load on the H200's Vulkan
// driver (softmax.wgsl's polls); poll_load stays for other devices' probes
fn poll_load(i: u32) -> u32 { return atomicLoad(&cur[i]); }
fn poll_rmw(i: u32) -> u32 { return atomicOr(&cur[i], 0u); }

// the value at words i, i+1: (ready, bits)
fn peek(i: u32) -> vec2<u32> {
    let lo = {{POLL}}(i);
    let hi = {{POLL}}(i + 1u);
    return vec2<u32>(select(0u, 1u, (lo & hi & READY) != 0u), (lo & 0xffffu) | (hi << 16u));
}

@compute @workgroup_size({{BLOCK}})
fn scan_lookback(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) { wtile = atomicAdd(&cur[4u * lp.groups], 1u); }
    let t = workgroupUniformLoad(&wtile);  // tiles in start order: a predecessor is running or done
    if (t >= lp.groups) { return; }  // 2-D grid padding
    if (lid < 4u) { atomicStore(&oth[4u * t + lid], 0u); }  // for the launch after this one
    if (t == 0u && lid == 0u) { atomicStore(&oth[4u * lp.groups], 0u); }
    let base = t * ({{BLOCK}}u * {{ITEMS}}u) + lid;
    var v: Tile;
    let agg = scan_tile(base, lp.n, lid, &v);
    if (lid == 0u) { publish(4u * t + select(0u, 2u, t == 0u), agg); }  // tile 0's Σ is its P
    var excl = {{T}}(0);
    var end = t;  // the window: tiles end − 1, end − 2, ..., end − WINDOW
    var spins = 0u;
    loop {
        if (end == 0u) { break; }
        if (lid < {{WINDOW}}u) {
            var st = 2u;  // before tile 0: a prefix of 0
            var val = {{T}}(0);
            if (lid < end) {
                let j = end - 1u - lid;
                st = 0u;
                if ((j & HIDE) == 0u) {
                    let p = peek(4u * j + 2u);
                    if (p.x != 0u) {
                        st = 2u;
                        val = bitcast<{{T}}>(p.y);
                    } else {
                        let a = peek(4u * j);
                        if (a.x != 0u) {
                            st = 1u;
                            val = bitcast<{{T}}>(a.y);
                        }
                    }
                }
            }
            lb_st[lid] = st;
            lb_val[lid] = val;
        }
        workgroupBarrier();
        if (lid == 0u) {  // nearest first: add sums up to the first P or unpublished tile
            var acc = {{T}}(0);
            var k = 0u;
            var stop = 0u;
            for (; k < {{WINDOW}}u; k = k + 1u) {
                let st = lb_st[k];
                if (st == 0u) { break; }
                acc = acc + lb_val[k];
                if (st == 2u) {
                    stop = DONE;
                    break;
                }
            }
            wacc = acc;
            wstep = k | stop;
        }
        let step = workgroupUniformLoad(&wstep);  // (a barrier: wacc is written)
        excl = excl + wacc;
        if ((step & DONE) != 0u) { break; }
        end = end - step;  // the nearest tile not consumed: end − 1
        if (step == 0u) {
            spins = spins + 1u;
            if (spins >= {{SPIN}}u) {  // it stayed unpublished: sum it here from x
                excl = excl + tile_sum((end - 1u) * ({{BLOCK}}u * {{ITEMS}}u) + lid, lp.n, lid);
                end = end - 1u;
                spins = 0u;
            }
        } else {
            spins = 0u;
        }
    }
    if (t > 0u && lid == 0u) { publish(4u * t + 2u, excl + agg); }
    write_tile(base, lp.n, lid, &v, excl, true);
}
