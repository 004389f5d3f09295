/* `ait gemm tune --mpi` in ait (gemm_mpi.h): exec ait-mpi, the ait command
 * built with Open MPI, from ait's own folder. A separate executable rather
 * than dlopen of libmpi: Open MPI's plugins need libmpi's symbols global,
 * and its MPI_COMM_WORLD and datatypes are addresses of its own globals,
 * so a dlopen'd libmpi would mean looking each one up by an ABI-specific
 * name; ait-mpi links MPI as any MPI program does. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/gemm_mpi.h"

int gemm_tune_mpi(int argc, char **argv, const char *untuned_path, const char *out_path, const gt_opts *o)
{
    (void)untuned_path, (void)out_path, (void)o;
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n < 0) {
        fprintf(stderr, "ait gemm tune: --mpi: cannot find ait's own folder (/proc/self/exe: %s)\n",
                strerror(errno));
        return 1;
    }
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0;
    if (dir + sizeof GEMM_MPI_EXE > sizeof path) {
        fprintf(stderr, "ait gemm tune: --mpi: ait's folder name is too long\n");
        return 1;
    }
    memcpy(path + dir, GEMM_MPI_EXE, sizeof GEMM_MPI_EXE);
    if (access(path, X_OK)) {
        fprintf(stderr, "ait gemm tune: --mpi runs %s, which is not there (%s): this ait was configured "
                        "without Open MPI (install libopenmpi-dev and openmpi-bin, then configure "
                        "again); --mp N tunes N shapes at once on one machine\n", path, strerror(errno));
        return 1;
    }
    char **av = malloc(((size_t)argc + 3) * sizeof *av);
    if (!av) {
        fprintf(stderr, "ait gemm tune: out of memory\n");
        return 1;
    }
    av[0] = path;
    av[1] = "gemm";
    memcpy(av + 2, argv, (size_t)argc * sizeof *av);
    av[argc + 2] = NULL;
    fflush(NULL);
    execv(path, av);
    fprintf(stderr, "ait gemm tune: --mpi: cannot run %s: %s\n", path, strerror(errno));
    free(av);
    return 1;
}
