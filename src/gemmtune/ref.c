/* OpenBLAS's, oneDNN's and BLIS's sgemm, the tuner's reference points (tune.h). */
#include <cblas.h>
#include <dlfcn.h>
#include <dnnl.h>
#include <omp.h>
#include <pthread.h>
#include <string.h>

#include "gemmtune/tune.h"

/* BLIS (libblis-dev) exports the same BLAS and CBLAS names as OpenBLAS
 * (sgemm_, cblas_sgemm): linked into libait beside it, one library would
 * take the other's calls. So BLIS is opened at run time, RTLD_LOCAL (its
 * names never join the process's global scope, where libait's cblas_sgemm
 * is found) and RTLD_DEEPBIND (its own calls bind to itself first, never
 * to OpenBLAS's), and only its typed API, whose bli_ names are its own, is
 * looked up. (The sanitizers' runtimes refuse RTLD_DEEPBIND: their builds
 * open it RTLD_LOCAL alone, which keeps libait's calls on OpenBLAS all the
 * same.) No libblis: no "blis" reference. */
typedef void (*bli_sgemm_fn)(int transa, int transb, int64_t m, int64_t n, int64_t k,
                             const float *alpha, const float *a, int64_t rsa, int64_t csa,
                             const float *b, int64_t rsb, int64_t csb, const float *beta, float *c,
                             int64_t rsc, int64_t csc);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BLIS_DEEPBIND 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BLIS_DEEPBIND 0
#endif
#endif
#ifndef BLIS_DEEPBIND
#define BLIS_DEEPBIND RTLD_DEEPBIND
#endif

static struct {
    pthread_once_t once;
    void *lib;
    bli_sgemm_fn sgemm;
} blis = {PTHREAD_ONCE_INIT, NULL, NULL};

static void blis_open(void)
{
    void *h = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL | BLIS_DEEPBIND);
    if (!h) return;
    bli_sgemm_fn f = (bli_sgemm_fn)dlsym(h, "bli_sgemm");
    void (*threads)(int64_t) = (void (*)(int64_t))dlsym(h, "bli_thread_set_num_threads");
    if (!f || !threads) {
        dlclose(h);
        return;
    }
    threads(1); /* BLIS otherwise takes its count from the environment */
    blis.lib = h;
    blis.sgemm = f;
}

bool gt_ref_available(const char *lib)
{
    if (!strcmp(lib, "openblas") || !strcmp(lib, "onednn")) return true;
    if (strcmp(lib, "blis")) return false;
    pthread_once(&blis.once, blis_open);
    return blis.sgemm != NULL;
}

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
        /* one thread, as the others: its OpenMP team otherwise takes every
         * core, and on a loaded machine its barriers cost 40 to 150 ms a call */
        omp_set_num_threads(1);
        if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n) !=
            dnnl_success)
            return err_set(e, AIT_E_INTERNAL, "dnnl_sgemm failed");
        return AIT_OK;
    }
    if (!strcmp(lib, "blis")) {
        if (!gt_ref_available(lib)) return err_set(e, AIT_E_UNSUPPORTED, "BLIS is not installed (libblis-dev)");
        const float one = 1.0f, zero = 0.0f;
        /* general strides: a transpose is a swap of them (0: BLIS_NO_TRANSPOSE) */
        blis.sgemm(0, 0, m, n, k, &one, a, ta ? 1 : lda, ta ? lda : 1, b, tb ? 1 : ldb,
                   tb ? ldb : 1, &zero, c, n, 1);
        return AIT_OK;
    }
    return err_set(e, AIT_E_INVALID_ARG, "unknown reference library '%s'", lib);
}
