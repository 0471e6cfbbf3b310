// read_ceiling.cu's plain-load forms in WGSL (scripts/read_ceiling.py --backend webgpu): how fast
// can one WebGPU dispatch read ~100–300 MB, timed by the WebGPU backend's sample? Every entry XORs
// all the 32-bit words it reads into out[0] (a workgroup-memory XOR tree, then one atomicXor per
// workgroup), and the script checks that value against the host's, so a form that skips data fails.
//
//   rd_empty  one invocation, no reads: the timed window's fixed cost (it names every binding, so
//             that its automatic layout takes the same three the launcher binds)
//   rd_ldg    grid-stride 16-byte loads, U of them in flight per invocation before any is used;
//             CHUNK 1: each workgroup reads one contiguous chunk instead of the grid-wide stride
// Placeholders: BLOCK (workgroup size, a power of two), U, CHUNK. Indices are u32: the buffer stays
// within the adapter's storage binding limit (below 4 GiB).

@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<atomic<u32>>;
struct Params { n16: u32 }
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> tree: array<u32, {{BLOCK}}>;

fn fold(v: vec4<u32>) -> u32 { return v.x ^ v.y ^ v.z ^ v.w; }

@compute @workgroup_size(1)
fn rd_empty() {
    if (p.n16 == 0xffffffffu) { atomicXor(&out[0], fold(a[0])); }
}

@compute @workgroup_size({{BLOCK}})
fn rd_ldg(@builtin(local_invocation_id) lid3: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
          @builtin(num_workgroups) nwg: vec3<u32>) {
    let lid = lid3.x;
    var hi = p.n16;
    var i = wid.x * {{BLOCK}}u + lid;
    var stride = nwg.x * {{BLOCK}}u;
    if ({{CHUNK}}u == 1u) {
        let per = (p.n16 + nwg.x - 1u) / nwg.x;
        hi = min(p.n16, wid.x * per + per);
        i = wid.x * per + lid;
        stride = {{BLOCK}}u;
    }
    var acc = 0u;
    loop {
        if (i + ({{U}}u - 1u) * stride >= hi) { break; }
        var v: array<vec4<u32>, {{U}}>;
        // @unroll
        for (var u = 0u; u < {{U}}u; u++) { v[u] = a[i + u * stride]; }
        // @unroll
        for (var u = 0u; u < {{U}}u; u++) { acc = acc ^ fold(v[u]); }
        i = i + {{U}}u * stride;
    }
    for (; i < hi; i = i + stride) { acc = acc ^ fold(a[i]); }
    tree[lid] = acc;
    workgroupBarrier();
    for (var h = {{BLOCK}}u / 2u; h > 0u; h = h / 2u) {
        if (lid < h) { tree[lid] = tree[lid] ^ tree[lid + h]; }
        workgroupBarrier();
    }
    if (lid == 0u) { atomicXor(&out[0], tree[0]); }
}
