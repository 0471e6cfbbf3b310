// mbarrier.cuh — the sm_90 pieces of a shared-memory pipeline fed by TMA: mbarriers with
// transaction counts, and the 1-D bulk and 2-D tensor copies that complete on one. Used by
// matmul_wgmma.cu, gemv_lowbit.cu's gemv_lowbit_tma and gemv_lowbit_pk, and scripts/read_ceiling.cu;
// addresses are shared-window (smem_u32). matmul_wgmma.cu keeps its own wait (a labelled PTX loop,
// the measured form).
#include "smem.cuh"

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// the initialised barriers visible to the async proxy (cp.async / TMA completions) too
__device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\nfence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}

// one arrival that also expects `bytes` more of transactions (the copies that complete on it)
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n"
                 ::"r"(bar), "r"(bytes) : "memory");
}

// until the phase of parity `parity` of the barrier at `bar` has completed
__device__ __forceinline__ void mbar_wait_parity(unsigned bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

// box (c0, c1) of the tensor map at tmap (global memory) into shared memory at dst, completing on bar
__device__ __forceinline__ void tma_2d(unsigned dst, const void* tmap, int c0, int c1, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"(tmap), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

// `bytes` (a multiple of 16, src 16-byte aligned) of global memory at src asked into L2 (nothing
// waits on it)
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(src), "r"(bytes) : "memory");
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) from src (global memory) into shared
// memory at dst, completing on bar
__device__ __forceinline__ void bulk_1d(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
