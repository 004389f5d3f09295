/* Which core OpenBLAS picked (it honours OPENBLAS_CORETYPE), its build
 * config, the CPU features GCC sees, the OPENBLAS_CORETYPE that fits them,
 * and oneDNN's version. Prints one JSON object.
 * usage: bench-blas-info */
#include <cblas.h>
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    static const char *const flags[] = {"sse3", "ssse3", "sse4.2", "avx", "fma", "avx2", "avx512f",
                                        "avx512bw", "avx512vl", "avx512dq", "avx512vnni",
                                        "avx512bf16"};
    int has[sizeof flags / sizeof flags[0]];
    /* __builtin_cpu_supports needs literal names. */
    has[0] = __builtin_cpu_supports("sse3");
    has[1] = __builtin_cpu_supports("ssse3");
    has[2] = __builtin_cpu_supports("sse4.2");
    has[3] = __builtin_cpu_supports("avx");
    has[4] = __builtin_cpu_supports("fma");
    has[5] = __builtin_cpu_supports("avx2");
    has[6] = __builtin_cpu_supports("avx512f");
    has[7] = __builtin_cpu_supports("avx512bw");
    has[8] = __builtin_cpu_supports("avx512vl");
    has[9] = __builtin_cpu_supports("avx512dq");
    has[10] = __builtin_cpu_supports("avx512vnni");
    has[11] = __builtin_cpu_supports("avx512bf16");
    /* OpenBLAS's SkylakeX kernels need AVX-512 F/BW/VL/DQ; Haswell's AVX2+FMA. */
    const char *fit = has[6] && has[7] && has[8] && has[9] ? "SkylakeX" : has[5] && has[4] ? "Haswell" : "";
    const dnnl_version_t *v = dnnl_version();
    const char *env = getenv("OPENBLAS_CORETYPE");
    printf("{\"openblas_corename\":\"%s\",\"openblas_config\":\"%s\",\"openblas_coretype_env\":\"%s\",",
           openblas_get_corename(), openblas_get_config(), env ? env : "");
    printf("\"coretype_fit\":\"%s\",\"onednn\":\"%d.%d.%d\",\"cpu_features\":[", fit, v->major, v->minor,
           v->patch);
    int first = 1;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (has[i]) printf("%s\"%s\"", first ? "" : ",", flags[i]), first = 0;
    printf("]}\n");
    return 0;
}
