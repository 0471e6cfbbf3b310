// smem.cuh — a generic pointer into shared memory as the 32-bit shared-window address PTX takes
// (mma_sm80.cuh, mbarrier.cuh; backends.base.read_source includes it once per kernel)
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
