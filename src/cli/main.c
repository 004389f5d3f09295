/* ait: the command-line front end. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "run a model on given or generated inputs; print outputs and latency"},
    {"inspect", cmd_inspect, "the module tree: sizes, FLOPs, time shares, graph specs, axes"},
    {"tune", cmd_tune, "try every way to run each module; keep the best; -o saves a .ait"},
    {"sign", cmd_sign, "sign a .ait with an Ed25519 key (NAME.ait.sig), for run --trusted-key"},
    {"keygen", cmd_keygen, "make an Ed25519 key pair for signing artifacts: KEY.pem, KEY.pub"},
    {"show", cmd_show, "what a .ait artifact holds: its plan, measurements, and if it runs here"},
    {"generate", cmd_generate, "greedy decoding on a decoder with a key/value cache: prefill, decode"},
    {"gemm", cmd_gemm, "per-shape GEMM tuning: capture a model's GEMMs, tune them, merge, compare"},
    {"report", cmd_report, "one HTML page from a tune (.ait or --json): module tree, candidates, plan"},
};

static void usage(FILE *f)
{
    fprintf(f, "ait %s: ahead-of-time inference tuner\n\n"
               "usage: ait COMMAND [OPTIONS]\n\ncommands:\n", AIT_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n`ait COMMAND --help` explains a command. Example:\n"
               "  ait run models/resnet18.onnx --batch 1 --threads 1\n"
               "  ait tune models/resnet18.onnx --batch-sizes 1,8 -o resnet18.ait\n"
               "  ait run resnet18.ait --batch 8\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ait %s\n", AIT_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ait: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
