/* `ait keygen -o KEY` and `ait sign NAME.ait --key KEY.pem` (io/sign.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "io/artifact.h"
#include "io/sign.h"

static const char keygen_help[] =
    "usage: ait keygen -o KEY\n\n"
    "Makes an Ed25519 key pair for signing artifacts: KEY.pem, the private key\n"
    "(mode 0600: keep it secret), and KEY.pub, the public key that\n"
    "`ait run --trusted-key KEY.pub` (or ait_artifact_options.trusted_key) checks.\n";

static const char sign_help[] =
    "usage: ait sign NAME.ait --key KEY.pem\n\n"
    "Checks the artifact (every hash) and signs it: NAME.ait.sig beside it holds an\n"
    "Ed25519 signature of its header, which vouches for every hash in it, so\n"
    "the signature covers every byte. The artifact itself is not rewritten.\n"
    "`ait run NAME.ait --trusted-key KEY.pub` then refuses it if any byte or the\n"
    "signature changes. Saving the artifact again needs a new signature.\n";

/* -o/--key VALUE and one positional argument at most; -1 to go on. */
static int parse(int argc, char **argv, const char *help, const char *opt, const char **val,
                 const char **pos)
{
    const struct option longopts[] = {{opt, required_argument, 0, 'v'},
                                      {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        if (c == 'v' || c == 'o') *val = optarg;
        else if (c == 'h') {
            fputs(help, stdout);
            return 0;
        } else {
            fputs(help, stderr);
            return 2;
        }
    }
    if ((pos ? optind != argc - 1 : optind != argc) || !*val) {
        fputs(help, stderr);
        return 2;
    }
    if (pos) *pos = argv[optind];
    return -1;
}

int cmd_keygen(int argc, char **argv)
{
    const char *base = NULL;
    int rc = parse(argc, argv, keygen_help, "output", &base, NULL);
    if (rc >= 0) return rc;
    ait_error e = {0};
    if (sign_keygen(base, &e) != AIT_OK) {
        fprintf(stderr, "ait keygen: %s\n", e.msg);
        return 1;
    }
    printf("wrote %s.pem (private: keep it secret) and %s.pub (public)\n", base, base);
    return 0;
}

int cmd_sign(int argc, char **argv)
{
    const char *key = NULL, *path = NULL;
    int rc = parse(argc, argv, sign_help, "key", &key, &path);
    if (rc >= 0) return rc;
    ait_error e = {0};
    artifact *a = NULL;
    artifact_expect x = {.skip_cpu_check = 1}; /* signed here, run elsewhere */
    ait_status s = artifact_open(path, &x, &a, &e);
    if (s == AIT_OK) s = sign_header(path, artifact_header(a), ARTIFACT_HEADER_SIZE, key, &e);
    artifact_close(a);
    if (s != AIT_OK) {
        fprintf(stderr, "ait sign: %s\n", e.msg);
        return 1;
    }
    printf("signed %s: %s%s\n", path, path, SIGN_SUFFIX);
    return 0;
}
