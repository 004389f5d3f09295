/* gemm_fuse (gemm_kern.h) on one vector: row i, columns j.. of a tile, the
 * bias and residual read under mask mk (all ones but on a tile's last,
 * partial vector). One text for both vector widths: gemm_fuse512.h (zmm)
 * and gemm_fuse256.h (ymm) define the names and operations below and include
 * it; it undefines them, so a file can include both.
 *
 * The includer defines FUSE (the functions' prefix), FUSE_TARGET (their
 * __attribute__((target))), FV and FM (the vector and mask types), and FADD,
 * FMUL, FMAX, FMIN, FFMA (a * b + c), FSET1, FZERO, FLOADM(p, mk) (lanes
 * past the mask 0) and FLTMUL(v, s) (s * v where v < 0, else v).
 *
 * It defines FUSE_bias (the column bias's vector at column j), FUSE_c (the
 * epilogue with that vector bc given), FUSE (both) and FUSE_f (the epilogue
 * in form FORM, gemm_fuse_form: a constant where the stores are instantiated
 * per form; lo and hi Clip's bounds). A tile's stores call FUSE_c or FUSE_f
 * with f a local copy of the kernel's gemm_fuse and bc loaded once per
 * column: through the caller's pointer every store to C may change *f and
 * the bias, so each vector reloaded them (the epilogue cost 1.4x to 1.7x the
 * GEMM at K 16 to 64). */
#define FUSE_PASTE2(a, b) a##b
#define FUSE_PASTE(a, b) FUSE_PASTE2(a, b)

FUSE_TARGET static inline FV FUSE_PASTE(FUSE, _bias)(const gemm_fuse *f, int j, FM mk)
{
    return f->bcol ? FLOADM(f->bcol + j, mk) : FZERO();
}

FUSE_TARGET static inline FV FUSE_PASTE(FUSE, _c)(FV v, const gemm_fuse *f, FV bc, int i, int j, FM mk)
{
    const FV zero = FZERO(), one = FSET1(1.0f);
    if (f->scale != 1.0f) v = FMUL(v, FSET1(f->scale));
    if (f->brow) v = FADD(v, FSET1(f->brow[i]));
    if (f->bcol) v = FADD(v, bc);
    FV rv = zero;
    if (f->res) rv = FLOADM(f->res + i * f->ldr + j, mk);
    if (f->res && !f->res_after) v = FFMA(FSET1(f->rk), rv, v);
    switch (f->act) {
    case GEMM_FUSE_RELU: v = FMAX(v, zero); break; /* NaN: 0 */
    case GEMM_FUSE_CLIP: v = FMIN(FSET1(f->hi), FMAX(FSET1(f->lo), v)); break;
    case GEMM_FUSE_LEAKY: v = FLTMUL(v, FSET1(f->lo)); break;
    case GEMM_FUSE_HARDSIGMOID:
        v = FFMA(v, FSET1(f->lo), FSET1(f->hi));
        v = FMIN(FMAX(v, zero), one);
        break;
    case GEMM_FUSE_HARDSWISH: {
        FV h = FFMA(v, FSET1(1.0f / 6), FSET1(0.5f));
        v = FMUL(v, FMIN(FMAX(h, zero), one));
        break;
    }
    default: break;
    }
    if (f->res && f->res_after) v = FFMA(FSET1(f->rk), rv, v);
    return v;
}

FUSE_TARGET static inline FV FUSE(FV v, const gemm_fuse *f, int i, int j, FM mk)
{
    return FUSE_PASTE(FUSE, _c)(v, f, FUSE_PASTE(FUSE, _bias)(f, j, mk), i, j, mk);
}

FUSE_TARGET static inline FV FUSE_PASTE(FUSE, _f)(FV v, int form, const gemm_fuse *f, FV bc, FV lo, FV hi, int i,
                                                 int j, FM mk)
{
    switch (form) {
    case GEMM_FORM_NONE: return v;
    case GEMM_FORM_BIAS: return FADD(v, bc);
    case GEMM_FORM_RELU: return FMAX(FADD(v, bc), FZERO()); /* NaN: 0 */
    case GEMM_FORM_CLIP: return FMIN(hi, FMAX(lo, FADD(v, bc)));
    default: return FUSE_PASTE(FUSE, _c)(v, f, bc, i, j, mk);
    }
}

#undef FUSE_PASTE
#undef FUSE_PASTE2
#undef FUSE
#undef FUSE_TARGET
#undef FV
#undef FM
#undef FADD
#undef FMUL
#undef FMAX
#undef FMIN
#undef FFMA
#undef FSET1
#undef FZERO
#undef FLOADM
#undef FLTMUL
