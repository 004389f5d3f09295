/* How `ait` shows the library's messages (see cli.h): the library prints
 * nothing itself. */
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

/* The one terminal state of the process: whether a status line is drawn
 * (and must be cleared before a line is printed). */
static struct {
    bool checked, tty, drawn, verbose;
} term;

void cli_log_verbose(void) { term.verbose = true; }

static void cli_log(void *user, ait_log_level level, const char *msg)
{
    (void)user;
    if (!term.checked) {
        term.tty = isatty(STDERR_FILENO);
        term.checked = true;
    }
    if (level == AIT_LOG_PROGRESS) {
        if (!term.tty) return; /* a log keeps the DEBUG lines instead */
        if (*msg || term.drawn) fprintf(stderr, "\r\033[K%s", msg);
        term.drawn = *msg != 0;
        fflush(stderr);
        return;
    }
    if (level == AIT_LOG_DEBUG && term.tty && !term.verbose) return; /* the bar says it */
    if (term.drawn) fputs("\r\033[K", stderr);
    term.drawn = false;
    fprintf(stderr, "%s%s\n", level == AIT_LOG_ERROR ? "ait: error: "
                              : level == AIT_LOG_WARN ? "ait: warning: " : "", msg);
}

logger cli_logger(void) { return (logger){cli_log, NULL}; }
