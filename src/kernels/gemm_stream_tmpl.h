/* gemm_stream_rows for one ISA (gemm_stream.c includes it after a vec_*.h). */
#define GST_CAT2(a, b) a##_##b
#define GST_CAT(a, b) GST_CAT2(a, b)
#define GST(name) GST_CAT(name, KSUF)

static void GST(stream_rows)(float *dst, int64_t ldd, const float *src, int64_t lds, int m, int n)
{
    for (int r = 0; r < m; r++) {
        float *d = dst + r * ldd;
        const float *s = src + r * lds;
        int j = 0;
        if ((uintptr_t)d % sizeof(float) == 0) {
            /* floats to the next vector boundary: plain stores up to it */
            int head = (int)((((uintptr_t)0 - (uintptr_t)d) / sizeof(float)) & (VL - 1));
            if (head > n) head = n;
            if (head) vstoren(d, vloadn(s, head), head);
            for (j = head; j + VL <= n; j += VL) GST_NT(d + j, vload(s + j));
            if (j < n) vstoren(d + j, vloadn(s + j, n - j), n - j);
            continue;
        }
        for (; j < n; j++) d[j] = s[j];
    }
}

#undef GST_NT
#undef GST
#undef GST_CAT
#undef GST_CAT2
