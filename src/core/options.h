/* Public option structs (ait_*_options) start with `size_t size`, set by
 * the caller to the sizeof it was compiled with, so that they can grow:
 * the library reads the fields within that size and takes defaults (zero)
 * for the rest. */
#ifndef AIT_CORE_OPTIONS_H
#define AIT_CORE_OPTIONS_H
#include <stddef.h>

#include "core/status.h"

/* Whether a caller's size (a struct's first field) is one the library can
 * take for a struct of full_size bytes: refused (AIT_E_INVALID_ARG, naming
 * the struct `name`) when 0, too small to hold the size itself, or larger
 * than full_size. */
ait_status opts_check_size(size_t size, size_t full_size, const char *name, ait_error *e);

/* Whether the caller's struct *p (its size set) holds `field`: only those
 * may be written back into it. */
#define OPTS_HAS(p, field) ((p)->size >= offsetof(__typeof__(*(p)), field) + sizeof((p)->field))

/* Copies the caller's struct `given` (NULL: all defaults) into `full`, a
 * struct of `full_size` bytes (the library's sizeof), zeroing what the
 * caller's shorter struct lacks; full's size field ends up full_size.
 * Refuses what opts_check_size refuses. */
ait_status opts_take(void *full, size_t full_size, const void *given, const char *name,
                     ait_error *e);

/* opts_take into the struct variable `dst`, named by its type. */
#define OPTS_TAKE(dst, given, e) opts_take(&(dst), sizeof(dst), (given), opts_name_(dst), (e))
#define OPTS_CHECK(p, e) opts_check_size((p)->size, sizeof *(p), opts_name_(*(p)), (e))
#define opts_name_(dst)                                                                  \
    _Generic((dst), ait_session_options: "ait_session_options",                          \
             ait_inspect_options: "ait_inspect_options",                                 \
             ait_tune_options: "ait_tune_options",                                       \
             ait_artifact_options: "ait_artifact_options")

#endif
