/* Status values with messages: every internal fallible call takes an
 * ait_error * (may be NULL) and returns the status it set. */
#ifndef AIT_CORE_STATUS_H
#define AIT_CORE_STATUS_H
#include "ait.h"

#define AIT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Sets e->code and e->msg; returns `code`. e may be NULL. */
ait_status err_set(ait_error *e, ait_status code, const char *fmt, ...) AIT_PRINTF(3, 4);
/* Prepends context ("node 'x' (Conv): ") to the message already in e. */
ait_status err_prefix(ait_error *e, const char *fmt, ...) AIT_PRINTF(2, 3);
/* Appends text to the message already in e, as much as fits. e may be NULL. */
void err_append(ait_error *e, const char *fmt, ...) AIT_PRINTF(2, 3);

/* Returns from the caller when `expr` is not AIT_OK. */
#define TRY(expr)                                                                        \
    do {                                                                                 \
        ait_status try_s_ = (expr);                                                      \
        if (try_s_ != AIT_OK) return try_s_;                                             \
    } while (0)

#endif
