// Planted WGSL kernels for the measurement-integrity tests (tests/wrong/integrity.py).
// {{T}}: element type (f32 | i32); {{DROP}}: the partial / tile sum left out (a u32 index).

struct P { n: u32, groups: u32 }

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(2) var<storage, read_write> part: array<{{T}}>;
@group(0) @binding(3) var<uniform> p: P;

var<workgroup> s: array<{{T}}, 256>;

// every entry point uses every binding (the launcher binds them by position, layout "auto")
fn touch_all() {
    _ = arrayLength(&x);
    _ = arrayLength(&y);
    _ = arrayLength(&part);
    _ = p.n;
}

// reduction step 1: one partial per workgroup of 256 (2-D grid: linear group id)
@compute @workgroup_size(256)
fn reduce_partials(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                   @builtin(local_invocation_index) l: u32) {
    touch_all();
    let g = wid.x + wid.y * nwg.x;
    let i = g * 256u + l;
    s[l] = select({{T}}(0), x[min(i, p.n - 1u)], i < p.n);
    workgroupBarrier();
    for (var w = 128u; w > 0u; w = w >> 1u) {
        if (l < w) { s[l] = s[l] + s[l + w]; }
        workgroupBarrier();
    }
    if (l == 0u && g < p.groups) { part[g] = s[0]; }
}

// reduction step 2 (one invocation): the partials, summed, except partial {{DROP}}
@compute @workgroup_size(1)
fn reduce_finish() {
    touch_all();
    var acc = {{T}}(0);
    for (var g = 0u; g < p.groups; g = g + 1u) {
        if (g != {{DROP}}u) { acc = acc + part[g]; }
    }
    y[0] = acc;
}

// scan step 1: one invocation per 256-element tile, serial; tile sums to part
@compute @workgroup_size(64)
fn scan_tiles(@builtin(global_invocation_id) gid: vec3<u32>) {
    touch_all();
    let t = gid.x;
    let lo = t * 256u;
    if (lo >= p.n) { return; }
    let hi = min(lo + 256u, p.n);
    var acc = {{T}}(0);
    for (var i = lo; i < hi; i = i + 1u) { acc = acc + x[i]; y[i] = acc; }
    part[t] = acc;
}

// scan step 2 (one invocation): tile sums → exclusive carries in place, tile {{DROP}} left out
@compute @workgroup_size(1)
fn scan_carry() {
    touch_all();
    var acc = {{T}}(0);
    for (var t = 0u; t < p.groups; t = t + 1u) {
        let v = part[t];
        part[t] = acc;
        if (t != {{DROP}}u) { acc = acc + v; }
    }
}

// scan step 3: add each tile's carry
@compute @workgroup_size(256)
fn scan_add(@builtin(global_invocation_id) gid: vec3<u32>) {
    touch_all();
    let i = gid.x;
    if (i < p.n) { y[i] = y[i] + part[i / 256u]; }
}
