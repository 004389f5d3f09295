/* libFuzzer target: an arbitrary byte string as the GEMM tuner's CSV
 * (src/io/csv.c) and as a tuned and an untuned GEMM database
 * (src/gemmtune/db.c). Every row the database accepts must write back
 * (gt_row_format) to a line that reads again as the same row, and the
 * runtime's table and a lookup must take it. The seeds (fuzz/corpus/csv)
 * are real tuned and untuned CSVs of `ait gemm`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemmtune/db.h"
#include "io/csv.h"

/* Rows written back and read again are the same rows. */
static void round_trip(const gt_db *db)
{
    static char text[CSV_FILE_MAX / 4096];
    size_t k = (size_t)snprintf(text, sizeof text, "%s\n", gt_header(db->tuned));
    int rows = 0;
    for (int i = 0; i < db->n && k < sizeof text; i++) {
        int n = gt_row_format(&db->rows[i], db->tuned, text + k, sizeof text - k);
        if (n < 0) break; /* the rest do not fit the buffer */
        k += (size_t)n;
        rows++;
    }
    gt_db back;
    if (gt_db_load_mem("back.csv", text, k, db->tuned, &back, NULL) != AIT_OK) abort();
    if (back.n != rows) abort();
    for (int i = 0; i < rows; i++) {
        const gt_row *a = &db->rows[i], *b = &back.rows[i];
        if (!gt_same_key(a, b, db->tuned) || a->count != b->count || strcmp(a->kernel, b->kernel) ||
            a->cfg.kc != b->cfg.kc || a->cfg.mc != b->cfg.mc || a->cfg.nc != b->cfg.nc ||
            a->cfg.pack_a != b->cfg.pack_a || a->cfg.order != b->cfg.order ||
            a->cfg.splitk != b->cfg.splitk || a->cfg.threads != b->cfg.threads ||
            a->cfg.kern != b->cfg.kern)
            abort();
    }
    gt_db_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The bare reader: every row until the end or an error. */
    csv c;
    if (csv_open_mem(&c, "fuzz.csv", (const char *)data, size, NULL) == AIT_OK) {
        bool got = true;
        while (csv_next(&c, &got, NULL) == AIT_OK && got)
            if (c.n < 1 || c.n > CSV_FIELDS_MAX || strlen(c.f[c.n - 1]) > CSV_FIELD_MAX) abort();
        csv_close(&c);
    }
    for (int tuned = 0; tuned < 2; tuned++) {
        gt_db db;
        if (gt_db_load_mem("fuzz.csv", (const char *)data, size, tuned, &db, NULL) != AIT_OK) continue;
        round_trip(&db);
        if (tuned && db.n) {
            /* The runtime's table for the first row's CPU, and a lookup in it. */
            gemm_tuned t;
            int skipped;
            if (gt_db_tuned(&db, &db.rows[0].cpu, &t, &skipped, NULL) == AIT_OK) gemm_tuned_free(&t);
            bool exact;
            (void)gt_db_lookup(&db, &db.rows[0].cpu, db.rows[0].m + 1, db.rows[0].n, db.rows[0].k,
                               db.rows[0].dtype, db.rows[0].layout, &exact);
        }
        /* Merging every row into a copy of the first keeps the database's keys. */
        gt_db m = {.tuned = db.tuned};
        for (int i = 0; i < db.n; i++)
            if (gt_db_merge(&m, &db.rows[i], NULL) != AIT_OK) abort();
        if (m.n != db.n) abort(); /* a database has no two rows of one key */
        gt_db_free(&m);
        gt_db_free(&db);
    }
    return 0;
}
