/* The logger (see log.h). */
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

void log_msg(const logger *lg, ait_log_level level, const char *fmt, ...)
{
    if (!log_on(lg)) return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lg->fn(lg->user, level, msg);
}
