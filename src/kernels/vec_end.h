/* Ends one ISA's instance of a template: the target returns to the file's
 * and the primitives are forgotten, for the next vec_*.h. */
#ifndef KVEC_PLAIN
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
#undef KVEC_PLAIN
#undef KSUF
#undef KISA_HERE
#undef V
#undef VL
#undef vload
#undef vstore
#undef vloadn
#undef vstoren
#undef vset1
#undef vzero
#undef vadd
#undef vsub
#undef vmul
#undef vdiv
#undef vrcp
#undef vfma
#undef vmax
#undef vmin
#undef vabs
#undef vcopysign
#undef vround
#undef vpow2i
#undef vscalef
#undef KVEC_SCALEF_ANY
#undef vhsum
#undef vhmax
#undef vloads
#undef vload_u8
#undef vstoren_u8
#undef VB
#undef VBN
#undef vb_zero
#undef vb_load
#undef vb_max
#undef vb_store
#undef vloadsn
#undef vgathern
#undef vzip
