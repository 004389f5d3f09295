/* What oneDNN chose for a built onednn module, for tests: this header does
 * not need dnnl.h, which only the onednn backend's files see. */
#ifndef AIT_BACKENDS_ONEDNN_IMPLS_H
#define AIT_BACKENDS_ONEDNN_IMPLS_H
#include "backends/backend.h"

/* The implementations of bm's current schedule (the one its last build or
 * run made or used), one "kind:implementation" per primitive step in order
 * ("convolution:brg:avx512_core", "binary:jit:uni", "reorder:simple:any")
 * and per node run on one of ait's kernels ("convtranspose:ait", kern.c),
 * into out[0..max) (valid until bm is freed or schedules anew); returns how
 * many steps there are (may exceed max). bm must be an onednn build. */
int dn_impls(const built *bm, const char **out, int max);
/* How many nodes of that schedule run on the reference ops. */
int dn_ref_nodes(const built *bm);

#endif
