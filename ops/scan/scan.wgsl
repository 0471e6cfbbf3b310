// scan.wgsl — inclusive prefix sum y[i] = Σ_{j<=i} x[j] (f32 or i32), reduce-then-scan.
// Minimum traffic: read n, write n elements (8·n bytes); this scheme moves 12·n (x is read twice):
// at most 2/3 of the bandwidth ceiling.
//
// Placeholders: BLOCK (workgroup size, power of two), ITEMS (16-byte vectors per invocation),
// NTOT_PAD (BLOCK·ITEMS + BLOCK·ITEMS/32), T (f32 | i32). Arrays are bound as raw 16-byte words
// (array<vec4<u32>>) and bitcast. A tile is ITEMS rows of BLOCK consecutive vec4s (4·BLOCK·ITEMS
// elements); invocation l loads vec4 l of every row (coalesced: a row is one contiguous span).
// Workgroup id g = wid.x + wid.y·nwg.x (2-D grids past 65535 groups); indices are u32 (n < 2^32).
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
//
// No single-pass look-back here: WebGPU makes no forward-progress promise between workgroups
// (a workgroup may not be scheduled until another finishes), so a workgroup spinning on its
// predecessor's flag can wait forever for a predecessor that never runs. Reduce-then-scan only
// waits at dispatch boundaries.
//
// The two entries use different interfaces at the same bindings (each pipeline's automatic
// layout holds only the variables its entry uses).

struct ReduceParams { n: u32, groups: u32 }
struct ScanParams { n: u32, groups: u32, has_carry: u32 }

@group(0) @binding(0) var<storage, read> x: array<vec4<u32>>;
// scan_reduce_tiles
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<uniform> rp: ReduceParams;
// scan_tiles
@group(0) @binding(1) var<storage, read_write> y: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> carry: array<u32>;
@group(0) @binding(3) var<uniform> sp: ScanParams;

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

@compute @workgroup_size({{BLOCK}})
fn scan_reduce_tiles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                     @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let base = g * ({{BLOCK}}u * {{ITEMS}}u) + lid;
    var acc = vec4<{{T}}>({{T}}(0));
    for (var j = 0u; j < {{ITEMS}}u; j = j + 1u) { acc = acc + load4(base + j * {{BLOCK}}u, rp.n); }
    s[0][lid] = (acc.x + acc.y) + (acc.z + acc.w);
    workgroupBarrier();
    for (var stride = {{BLOCK}}u / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) { s[0][lid] = s[0][lid] + s[0][lid + stride]; }
        workgroupBarrier();  // level k+1 reads what level k wrote
    }
    if (lid == 0u && g < rp.groups) { sums[g] = bitcast<u32>(s[0][0]); }
}

@compute @workgroup_size({{BLOCK}})
fn scan_tiles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    let base = g * ({{BLOCK}}u * {{ITEMS}}u) + lid;
    var v: array<vec4<{{T}}>, {{ITEMS}}>;
    for (var j = 0u; j < {{ITEMS}}u; j = j + 1u) {
        var a = load4(base + j * {{BLOCK}}u, sp.n);
        a.y = a.y + a.x;  // serial scan inside the vec4
        a.z = a.z + a.y;
        a.w = a.w + a.z;
        v[j] = a;
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
    var carry_in = {{T}}(0);
    if (sp.has_carry != 0u && g > 0u) { carry_in = bitcast<{{T}}>(carry[g - 1u]); }
    for (var j = 0u; j < {{ITEMS}}u; j = j + 1u) {
        let f = j * {{BLOCK}}u + lid;
        var prefix = carry_in;
        if (f > 0u) { prefix = prefix + tot[pad(f - 1u)]; }
        let i = base + j * {{BLOCK}}u;
        // the whole last vec4 is written: buffers are padded to 16 bytes, lanes past n are padding
        if (g < sp.groups && 4u * i < sp.n) { y[i] = bitcast<vec4<u32>>(v[j] + vec4<{{T}}>(prefix)); }
    }
}
