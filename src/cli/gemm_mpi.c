/* `ait gemm tune --mpi` in ait-mpi (gemm_mpi.h): the ait command built
 * with Open MPI, which `ait gemm tune --mpi` execs (gemm_mpi_exec.c). Only
 * ait-mpi links MPI: neither ait nor libait does. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gemm_mpi.h"

enum { TAG_ROW = 1, TAG_DONE = 2 };

/* Each rank's messages start "rank R/K: ". */
typedef struct rank_log {
    logger to;
    int rank, size;
} rank_log;

static void rank_say(void *user, ait_log_level level, const char *msg)
{
    rank_log *r = user;
    char buf[2200];
    snprintf(buf, sizeof buf, "rank %d/%d: %s", r->rank, r->size, msg);
    r->to.fn(r->to.user, level, buf);
}

/* The shapes left, as an untuned CSV's text (malloc'd, *len bytes). */
static ait_status todo_text(const char *untuned_path, const char *out_path, const gt_opts *o,
                            char **text, long long *len, ait_error *e)
{
    gt_db in, todo;
    TRY(gt_db_load(untuned_path, false, &in, e));
    ait_status s = gt_todo(&in, out_path, o, &todo, e);
    gt_db_free(&in);
    if (s != AIT_OK) return s;
    size_t cap = 4096 + (size_t)todo.n * 160, n = 0;
    char *t = malloc(cap);
    if (!t) s = err_set(e, AIT_E_NOMEM, "out of memory");
    if (t) n = (size_t)snprintf(t, cap, "%s\n", gt_header(false));
    for (int i = 0; s == AIT_OK && i < todo.n; i++) {
        int w = gt_row_format(&todo.rows[i], false, t + n, cap - n - 1);
        if (w < 0) s = err_set(e, AIT_E_INTERNAL, "a row of %s is too long", untuned_path);
        else n += (size_t)w, t[n++] = '\n';
    }
    gt_db_free(&todo);
    if (s == AIT_OK && n > INT_MAX) s = err_set(e, AIT_E_UNSUPPORTED, "%s: too many shapes", untuned_path);
    if (s != AIT_OK) {
        free(t);
        return s;
    }
    *text = t;
    *len = (long long)n;
    return AIT_OK;
}

/* Rank 0: one message from another rank (a row, appended; or its end). */
static ait_status take(const char *out_path, int *done, int *failed, ait_error *e)
{
    MPI_Status st;
    int n;
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_CHAR, &n);
    char *buf = malloc((size_t)n + 1);
    if (!buf) return err_set(e, AIT_E_NOMEM, "out of memory");
    MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    buf[n] = '\0';
    ait_status s = AIT_OK;
    if (st.MPI_TAG == TAG_DONE) {
        ++*done;
        if (strcmp(buf, "ok")) ++*failed;
    } else {
        /* the row as a CSV of one row: read back, so a row is checked as a file's is */
        char name[32], *csv = malloc(strlen(gt_header(true)) + (size_t)n + 2);
        snprintf(name, sizeof name, "rank %d", st.MPI_SOURCE);
        gt_db one = {0};
        if (!csv) s = err_set(e, AIT_E_NOMEM, "out of memory");
        else sprintf(csv, "%s\n%s", gt_header(true), buf);
        if (s == AIT_OK) s = gt_db_load_mem(name, csv, strlen(csv), true, &one, e);
        if (s == AIT_OK && one.n != 1) s = err_set(e, AIT_E_INTERNAL, "%s sent %d rows", name, one.n);
        if (s == AIT_OK) s = gt_db_append(out_path, &one.rows[0], e);
        gt_db_free(&one);
        free(csv);
    }
    free(buf);
    return s;
}

int gemm_tune_mpi(int argc, char **argv, const char *untuned_path, const char *out_path, const gt_opts *o)
{
    (void)argc, (void)argv;
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank_log rl = {o->log, rank, size};
    gt_opts ro = *o;
    if (o->log.fn) ro.log = (logger){rank_say, &rl};
    ait_error e = {0};
    char *text = NULL;
    long long len = -1;
    if (rank == 0 && todo_text(untuned_path, out_path, &ro, &text, &len, &e) != AIT_OK) {
        fprintf(stderr, "ait gemm tune: %s\n", e.msg);
        len = -1;
    }
    MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (len < 0) {
        MPI_Finalize();
        return 1;
    }
    if (rank != 0 && !(text = malloc((size_t)len + 1))) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Bcast(text, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
    gt_db todo;
    ait_status s = gt_db_load_mem("the shapes from rank 0", text, (size_t)len, false, &todo, &e);
    free(text);
    if (s != AIT_OK) MPI_Abort(MPI_COMM_WORLD, 1); /* rank 0 wrote it: cannot happen */
    int mine = 0, failed = 0, done = 0, senders_failed = 0;
    for (int i = rank; i < todo.n; i += size) mine++;
    log_msg(&ro.log, AIT_LOG_INFO, "%d of %d shapes", mine, todo.n);
    for (int i = rank; i < todo.n; i += size) {
        gt_row row;
        char line[4096];
        ait_error ce = {0};
        s = gt_tune_shape(&todo.rows[i], &ro, &row, &ce);
        if (s == AIT_OK && rank == 0) s = gt_db_append(out_path, &row, &ce);
        else if (s == AIT_OK && gt_row_format(&row, true, line, sizeof line) < 0)
            s = err_set(&ce, AIT_E_INTERNAL, "a row too long to send");
        else if (s == AIT_OK)
            MPI_Send(line, (int)strlen(line), MPI_CHAR, 0, TAG_ROW, MPI_COMM_WORLD);
        if (s != AIT_OK) {
            log_msg(&ro.log, AIT_LOG_ERROR, "gemm %lldx%lldx%lld: %s", (long long)todo.rows[i].m,
                    (long long)todo.rows[i].n, (long long)todo.rows[i].k, ce.msg);
            failed++;
        }
        /* rank 0 appends the others' rows between its own shapes, as they come */
        int ready = 1;
        while (rank == 0 && ready) {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, MPI_STATUS_IGNORE);
            if (ready && take(out_path, &done, &senders_failed, &ce) != AIT_OK) {
                log_msg(&ro.log, AIT_LOG_ERROR, "%s", ce.msg);
                failed++;
            }
        }
    }
    int shapes = todo.n;
    gt_db_free(&todo);
    int rc = failed ? 1 : 0;
    if (rank != 0) {
        MPI_Send(failed ? "failed" : "ok", failed ? 6 : 2, MPI_CHAR, 0, TAG_DONE, MPI_COMM_WORLD);
    } else {
        while (done < size - 1) {
            if (take(out_path, &done, &senders_failed, &e) != AIT_OK) {
                log_msg(&ro.log, AIT_LOG_ERROR, "%s", e.msg);
                rc = 1;
            }
        }
        if (gt_finish(out_path, &e) != AIT_OK) {
            fprintf(stderr, "ait gemm tune: %s\n", e.msg);
            rc = 1;
        }
        if (failed || senders_failed) {
            fprintf(stderr, "ait gemm tune: some shapes could not be tuned (see above)\n");
            rc = 1;
        }
        if (!rc) printf("wrote %s: %d shape%s tuned on %d rank%s\n", out_path, shapes, shapes == 1 ? "" : "s",
                        size, size == 1 ? "" : "s");
    }
    MPI_Finalize();
    return rc;
}
