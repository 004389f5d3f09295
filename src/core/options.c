/* Sized option structs (see options.h). */
#include "core/options.h"

#include <string.h>

ait_status opts_check_size(size_t size, size_t full_size, const char *name, ait_error *e)
{
    if (size == 0)
        return err_set(e, AIT_E_INVALID_ARG, "%s.size is 0: set it to sizeof(%s)", name, name);
    if (size < sizeof size || size > full_size)
        return err_set(e, AIT_E_INVALID_ARG, "%s.size is %zu: this library knows sizes %zu to %zu "
                       "(set it to sizeof(%s); a newer ait.h than the library?)", name, size,
                       sizeof size, full_size, name);
    return AIT_OK;
}

ait_status opts_take(void *full, size_t full_size, const void *given, const char *name,
                     ait_error *e)
{
    memset(full, 0, full_size);
    size_t size = full_size;
    if (given) {
        memcpy(&size, given, sizeof size);
        TRY(opts_check_size(size, full_size, name, e));
        memcpy(full, given, size);
    }
    memcpy(full, &full_size, sizeof full_size);
    return AIT_OK;
}
