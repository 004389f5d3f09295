/* OpenBLAS's and oneDNN's sgemm, the tuner's reference points (tune.h). */
#include <cblas.h>
#include <dnnl.h>
#include <string.h>

#include "gemmtune/tune.h"

ait_status gt_ref_sgemm(const char *lib, const char layout[3], int64_t m, int64_t n, int64_t k,
                        const float *a, const float *b, float *c, ait_error *e)
{
    bool ta = layout[0] == 't', tb = layout[1] == 't';
    int64_t lda = ta ? m : k, ldb = tb ? k : n;
    if (!strcmp(lib, "openblas")) {
        openblas_set_num_threads(1);
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    (blasint)m, (blasint)n, (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb, 0.0f,
                    c, (blasint)n);
        return AIT_OK;
    }
    if (!strcmp(lib, "onednn")) {
        if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n) !=
            dnnl_success)
            return err_set(e, AIT_E_INTERNAL, "dnnl_sgemm failed");
        return AIT_OK;
    }
    return err_set(e, AIT_E_INVALID_ARG, "unknown reference library '%s'", lib);
}
