/* Number arguments, the double order and JSON output shared by the
 * subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

bool cli_parse_int(const char *s, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) return false;
    *v = x;
    return true;
}

int cli_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cli_print_json(json_w *w, const char *cmd)
{
    ait_error e = {0};
    char *doc = json_finish(w, &e);
    if (!doc) {
        fprintf(stderr, "ait %s: %s\n", cmd, e.msg);
        return 1;
    }
    fputs(doc, stdout);
    free(doc);
    return 0;
}
