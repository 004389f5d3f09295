/* `mpirun -n K ait gemm tune --mpi`: the shapes spread over MPI ranks
 * (gemm_mpi.c; Open MPI, optional at configure time). */
#ifndef AIT_CLI_GEMM_MPI_H
#define AIT_CLI_GEMM_MPI_H
#include "gemmtune/tune.h"

/* Rank 0 reads untuned_path and what out_path already holds (a resumed
 * tune) and sends every rank the shapes left; rank r tunes the shapes
 * i % K == r, one at a time, and sends each row to rank 0 as it is done;
 * rank 0 appends each row to out_path as it arrives (fsync'd: an
 * interrupted run resumes) and at the end sorts it as gt_tune does, so
 * the file has the rows, the columns and the order of a one-process tune.
 * Returns the exit code (1 when ait was built without MPI, saying so). */
int gemm_tune_mpi(const char *untuned_path, const char *out_path, const gt_opts *o);

#endif
