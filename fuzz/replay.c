/* Replays inputs through a fuzz target without libFuzzer: the regression
 * test for every crash the fuzzers found (fuzz/regressions/ for the model
 * target, fuzz/regressions/image/ for the image one). Prints one line
 * per file and "N passed, N failed"; a crash or sanitizer report fails it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static uint8_t buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 1;
}

int main(int argc, char **argv)
{
    int pass = 0, fail = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (!d) { /* a file */
            if (replay(argv[a])) pass++, printf("ok %s\n", argv[a]);
            else fail++, printf("FAIL %s: cannot read\n", argv[a]);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.' || e->d_type == DT_DIR) continue; /* another target's */
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[a], e->d_name);
            if (replay(p)) pass++, printf("ok %s\n", p);
            else fail++, printf("FAIL %s: cannot read\n", p);
        }
        closedir(d);
    }
    printf("%d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
