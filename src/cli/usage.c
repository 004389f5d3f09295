/* Usage errors of every subcommand: one line, ending in where the help is,
 * never the whole help (it would bury the line that says what was wrong). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ait %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see ait %s --help)\n", cmd);
    va_end(ap);
    return 2;
}

int cli_bad_option(const char *cmd, int c, char *const *argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':') return cli_usage(cmd, "%s needs a value", arg);
    if (optopt > 0 && optopt < 128 && arg[0] == '-' && arg[1] != '-')
        return cli_usage(cmd, "unknown option '-%c'", optopt);
    return cli_usage(cmd, "unknown option '%s'", arg);
}

int cli_one_model(const char *cmd, int argc, char *const *argv, int first)
{
    if (first >= argc) return cli_usage(cmd, "no MODEL given");
    if (first < argc - 1)
        return cli_usage(cmd, "unexpected argument '%s': one MODEL only, and it is '%s'",
                         argv[first + 1], argv[first]);
    return -1;
}
