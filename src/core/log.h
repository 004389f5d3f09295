/* The library's one way to say something: a logger (the caller's callback
 * and its pointer, from the public options) that every layer passes down.
 * The library never prints; with no callback, messages go nowhere. */
#ifndef AIT_CORE_LOG_H
#define AIT_CORE_LOG_H
#include <stdbool.h>

#include "core/status.h"

typedef struct logger {
    ait_log_fn fn; /* NULL: nothing is said */
    void *user;
} logger;

/* Whether messages reach anyone (callers skip work that only feeds a
 * message). lg may be NULL. */
static inline bool log_on(const logger *lg) { return lg && lg->fn; }

/* Formats one message (truncated at 2 KiB) and hands it to lg's callback;
 * nothing when !log_on(lg). */
void log_msg(const logger *lg, ait_log_level level, const char *fmt, ...) AIT_PRINTF(3, 4);

#endif
