/* Inputs for `ait run`: loaded from .npy/.npz, or generated from the
 * model's declared dims (by samples_generate_input, the generator that
 * `ait inspect` and `ait tune` use too). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/npy.h"
#include "tune/samples.h"

static int input_index(const ait_model *m, const char *name)
{
    for (int i = 0; i < m->g->n_inputs; i++)
        if (!strcmp(m->g->vals[m->g->inputs[i]].name, name)) return i;
    return -1;
}

/* `--input NAME=VALUE`: a number given on the command line, for an input
 * declared with one element (a scalar such as a sample rate), in the
 * input's dtype and declared shape. *taken false (nothing made) when `text`
 * is not a number or names an existing file. */
static ait_status from_literal(const ait_model *m, int i, const char *text, ait_tensor **out,
                               bool *taken, ait_error *e)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    *taken = *text && !*end && !errno && access(text, F_OK) != 0;
    if (!*taken) return AIT_OK;
    const value *iv = &m->g->vals[m->g->inputs[i]];
    int64_t dims[AIT_MAX_RANK];
    bool one = iv->rank >= 0 && iv->dtype != AIT_UNDEFINED;
    for (int d = 0; one && d < iv->rank; d++) {
        one = iv->dims[d] == 1 || iv->dims[d] == DIM_UNKNOWN;
        dims[d] = 1;
    }
    if (!one)
        return err_set(e, AIT_E_INVALID_ARG, "--input %s=%s: a value on the command line is for "
                       "an input of one element; '%s' is declared %s: give it as a .npy file",
                       iv->name, text, iv->name, iv->rank < 0 ? "without a shape" : "with more");
    *out = ait_tensor_create(iv->dtype, iv->rank, dims);
    if (!*out) return err_set(e, AIT_E_NOMEM, "out of memory");
    elem_set_sat(ait_tensor_data(*out), iv->dtype, 0, v);
    return AIT_OK;
}

static ait_status from_files(const ait_model *m, const input_opts *o, ait_tensor **tensors,
                             ait_error *e)
{
    for (int f = 0; f < o->n_files; f++) {
        const char *spec = o->file_specs[f], *eq = strchr(spec, '=');
        size_t len = strlen(spec);
        if (!eq && len > 4 && !strcmp(spec + len - 4, ".npz")) {
            npz *z;
            TRY(npz_load_max(spec, o->max_input, &z, e));
            for (int k = 0; k < z->n; k++) {
                int i = input_index(m, z->names[k]);
                if (i < 0) {
                    char names[512];
                    err_set(e, AIT_E_NOT_FOUND, "%s: array '%s' is not an input of %s (%s)", spec,
                            z->names[k], m->path, graph_input_names(m->g, names, sizeof names));
                    npz_free(z);
                    return e->code;
                }
                ait_tensor_free(tensors[i]);
                tensors[i] = z->arrays[k];
                z->arrays[k] = NULL;
            }
            npz_free(z);
            continue;
        }
        if (!eq)
            return err_set(e, AIT_E_INVALID_ARG, "--input '%s': expected NAME=FILE.npy, "
                           "NAME=VALUE or FILE.npz",
                           spec);
        char name[512];
        snprintf(name, sizeof name, "%.*s", (int)(eq - spec), spec);
        int i = input_index(m, name);
        if (i < 0) {
            char names[512];
            return err_set(e, AIT_E_NOT_FOUND, "--input: '%s' is not an input of %s (%s)", name,
                           m->path, graph_input_names(m->g, names, sizeof names));
        }
        ait_tensor_free(tensors[i]);
        tensors[i] = NULL;
        bool taken;
        TRY(from_literal(m, i, eq + 1, &tensors[i], &taken, e));
        if (!taken) TRY(ait_tensor_load_npy_max(eq + 1, o->max_input, &tensors[i], e));
    }
    return AIT_OK;
}

/* What the generator is told: --batch, --dim, --seed. */
static sample_opts gen_opts(const input_opts *o)
{
    sample_opts so = {.batch = o->batch, .n_dims = o->n_dims, .count = 1, .seed = o->seed,
                      .log = cli_logger()};
    for (int k = 0; k < o->n_dims; k++) {
        so.dim_names[k] = o->dim_names[k];
        so.dim_vals[k] = o->dim_vals[k];
    }
    return so;
}

void inputs_explain(const ait_model *m, const input_opts *o, const bool *generated, ait_error *e)
{
    sample_opts so = gen_opts(o);
    samples_explain_defaults(m, &so, generated, e);
}

ait_status inputs_make(const ait_model *m, const input_opts *o, ait_tensor **tensors,
                       bool *generated, ait_error *e)
{
    int n = m->g->n_inputs;
    for (int i = 0; i < n; i++) tensors[i] = NULL, generated[i] = false;
    sample_opts so = gen_opts(o);
    TRY(samples_check_dims(m, &so, e));
    ait_status s = from_files(m, o, tensors, e);
    /* One random stream across the generated inputs, as samples_generate
     * draws it: `ait run` without files gets the values of sample 0 that
     * `ait inspect` would generate with the same seed. */
    uint64_t rng = o->seed;
    for (int i = 0; s == AIT_OK && i < n; i++)
        if (!tensors[i]) {
            s = samples_generate_input(m, i, &so, &rng, &tensors[i], e);
            generated[i] = true;
        }
    if (s != AIT_OK)
        for (int i = 0; i < n; i++) {
            ait_tensor_free(tensors[i]);
            tensors[i] = NULL;
        }
    return s;
}
