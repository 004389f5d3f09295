/* `mpirun -n K ait gemm tune --mpi`: the shapes spread over MPI ranks.
 * Two implementations, one per executable: ait's (gemm_mpi_exec.c) execs
 * ait-mpi, the ait command built with Open MPI beside it; ait-mpi's
 * (gemm_mpi.c) tunes. So only `--mpi` loads libmpi: every other ait
 * start-up is spared it. */
#ifndef AIT_CLI_GEMM_MPI_H
#define AIT_CLI_GEMM_MPI_H
#include "gemmtune/tune.h"

/* The name of the executable `ait gemm tune --mpi` execs, in ait's folder. */
#define GEMM_MPI_EXE "ait-mpi"

/* argv: `ait gemm tune`'s arguments from "tune" on (argc of them).
 * In ait: execs GEMM_MPI_EXE from ait's own folder with `gemm` and argv
 * (the process, its id and its environment stay, so under mpirun each
 * rank becomes an ait-mpi rank); returns 1, saying why, when it is not
 * there (ait configured without Open MPI) or cannot be run.
 * In ait-mpi: rank 0 reads untuned_path and what out_path already holds
 * (a resumed tune) and sends every rank the shapes left; rank r tunes the
 * shapes i % K == r, one at a time, and sends each row to rank 0 as it is
 * done; rank 0 appends each row to out_path as it arrives (fsync'd: an
 * interrupted run resumes) and at the end sorts it as gt_tune does, so
 * the file has the rows, the columns and the order of a one-process tune.
 * Returns the exit code. */
int gemm_tune_mpi(int argc, char **argv, const char *untuned_path, const char *out_path, const gt_opts *o);

#endif
