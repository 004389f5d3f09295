/* krope's row for one ISA (rope.c includes it after a vec_*.h): the two
 * halves of the row a vector at a time, the last one under a mask. */
#define ROPE_CAT2(a, b) a##_##b
#define ROPE_CAT(a, b) ROPE_CAT2(a, b)
#define ROPE(name) ROPE_CAT(name, KSUF)

static void ROPE(rope_row)(const float *x, const float *c, const float *s, float *y, int64_t h)
{
    const float *x2 = x + h, *c2 = c + h, *s2 = s + h;
    float *y2 = y + h;
    int64_t i = 0;
    for (; i + VL <= h; i += VL) {
        V a = vload(x + i), b = vload(x2 + i);
        vstore(y + i, vsub(vmul(a, vload(c + i)), vmul(b, vload(s + i))));  /* x1 c - x2 s */
        vstore(y2 + i, vfma(a, vload(s2 + i), vmul(b, vload(c2 + i))));    /* x2 c + x1 s */
    }
    if (i < h) {
        size_t n = (size_t)(h - i);
        V a = vloadn(x + i, n), b = vloadn(x2 + i, n);
        vstoren(y + i, vsub(vmul(a, vloadn(c + i, n)), vmul(b, vloadn(s + i, n))), n);
        vstoren(y2 + i, vfma(a, vloadn(s2 + i, n), vmul(b, vloadn(c2 + i, n))), n);
    }
}

#undef ROPE
#undef ROPE_CAT
#undef ROPE_CAT2
