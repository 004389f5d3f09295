/* A tile of C written past the caches: rows [0, m) x [0, n) of src (row
 * stride lds, in L1: a skinny call's output) copied to dst (row stride ldd)
 * with non-temporal stores wherever dst is aligned to a vector, plain
 * (masked) stores at each row's unaligned head and tail. For a C that is
 * written once and is larger than the caches (large M at small K), so its
 * lines go to memory without first being read for ownership. AVX-512, AVX2
 * and portable (plain stores) instances, picked by kisa. */
#ifndef AIT_KERNELS_GEMM_STREAM_H
#define AIT_KERNELS_GEMM_STREAM_H
#include <stdint.h>

void gemm_stream_rows(float *dst, int64_t ldd, const float *src, int64_t lds, int m, int n);
/* Orders the calling thread's non-temporal stores before what follows
 * (sfence): after its last gemm_stream_rows, before C is read elsewhere. */
void gemm_stream_fence(void);

#endif
