#include "core/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[AIT_STATUS_COUNT] = {
    [AIT_OK] = "AIT_OK",
    [AIT_E_INVALID_ARG] = "AIT_E_INVALID_ARG",
    [AIT_E_IO] = "AIT_E_IO",
    [AIT_E_PARSE] = "AIT_E_PARSE",
    [AIT_E_UNSUPPORTED] = "AIT_E_UNSUPPORTED",
    [AIT_E_SHAPE] = "AIT_E_SHAPE",
    [AIT_E_DTYPE] = "AIT_E_DTYPE",
    [AIT_E_OVERFLOW] = "AIT_E_OVERFLOW",
    [AIT_E_NOMEM] = "AIT_E_NOMEM",
    [AIT_E_NOT_FOUND] = "AIT_E_NOT_FOUND",
    [AIT_E_SECURITY] = "AIT_E_SECURITY",
    [AIT_E_INTERNAL] = "AIT_E_INTERNAL",
};

const char *ait_status_string(ait_status s)
{
    if ((unsigned)s < AIT_STATUS_COUNT && status_names[s]) return status_names[s];
    return "AIT_E_UNKNOWN";
}

const char *ait_version(void) { return AIT_VERSION_STRING; }

ait_status err_set(ait_error *e, ait_status code, const char *fmt, ...)
{
    if (!e) return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

void err_append(ait_error *e, const char *fmt, ...)
{
    if (!e) return;
    size_t at = strlen(e->msg);
    if (at + 1 >= sizeof e->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + at, sizeof e->msg - at, fmt, ap);
    va_end(ap);
}

ait_status err_prefix(ait_error *e, const char *fmt, ...)
{
    if (!e) return AIT_E_INTERNAL;
    char head[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s%s", head, old);
    return e->code;
}
