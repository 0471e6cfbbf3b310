// Planted WGSL vector_add kernels (tests/wrong/integrity.py): c[i] = a[i] + b[i], except for the
// defect each is named for. Bindings: a, b, c, a ticket counter, params {n}.

struct P { n: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> ticket: atomic<u32>;
@group(0) @binding(4) var<uniform> p: P;

var<workgroup> block: u32;

fn touch_all() {
    _ = arrayLength(&a);
    _ = arrayLength(&b);
    _ = arrayLength(&c);
    _ = &ticket;
    _ = p.n;
}

// a coverage hole: the group id ignores workgroup_id.y, so on a 2-D grid the groups of rows
// y > 0 redo row 0's elements and the rest of the array is never written
@compute @workgroup_size(256)
fn add_ignore_y(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) l: u32) {
    touch_all();
    let i = wid.x * 256u + l;
    if (i < p.n) { c[i] = a[i] + b[i]; }
}

// state across launches: blocks are taken from a ticket counter that is never reset
@compute @workgroup_size(256)
fn add_ticket(@builtin(local_invocation_index) l: u32) {
    touch_all();
    if (l == 0u) { block = atomicAdd(&ticket, 1u); }
    let blk = workgroupUniformLoad(&block);
    let i = blk * 256u + l;
    if (i < p.n) { c[i] = a[i] + b[i]; }
}
