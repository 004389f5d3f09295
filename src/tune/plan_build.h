/* Building a plan from a tune report and saving it as an artifact
 * (tune/plan_build.c); the plan itself is runtime/plan.h. */
#ifndef AIT_TUNE_PLAN_BUILD_H
#define AIT_TUNE_PLAN_BUILD_H
#include "runtime/model.h"
#include "runtime/plan.h"

struct inspection;
struct tune_report;

/* The plan of a tune report: one module per tuned module, in report order,
 * with a choice per bucket; batch axes from the inspection's model inputs. */
ait_status plan_from_report(const struct inspection *insp, const struct tune_report *r,
                            plan **out, ait_error *e);

/* Saves model m tuned as report r says into the artifact at path (see
 * plan.h's manifest): the ONNX file's bytes (re-read from m->path, which
 * must not have external data) as blob "model.onnx", the plan, the
 * inspection of the tuned modules, and the prepared blobs of every chosen
 * candidate, built here once more in this process. */
ait_status plan_save(const ait_model *m, const struct inspection *insp,
                     const struct tune_report *r, const char *path, ait_error *e);

/* For a plan with quantised choices plan_save writes the lean model instead
 * (plan.h, PLAN_MODEL_LEAN_BLOB): the ONNX file buf[len] of model m with
 * the data of every weight left out (io/onnx.h, onnx_leave_out) that the
 * plan saved at path, loaded back as a session loads it, no longer reads
 * (plan_exec_releasable). Into *out (malloc'd, *out_len bytes); *n_left:
 * how many weights; 0 and *out NULL when none. */
ait_status plan_lean_model(const ait_model *m, const char *path, const uint8_t *buf, size_t len,
                           uint8_t **out, size_t *out_len, int *n_left, ait_error *e);

#endif
