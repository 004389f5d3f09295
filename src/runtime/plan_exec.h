/* Running a plan (runtime/plan.h): the model's graph with each tuned module
 * collapsed into one node whose op runs the module on the candidate the
 * plan chose for the run's batch bucket; every other node runs on the
 * reference ops, in the same executor. A module that keeps the baseline
 * (the reference, default variant) at every bucket is not collapsed: its
 * nodes run as they do in the untuned model. Every chosen candidate is built
 * when the runner is created (from the artifact's prepared blobs when the
 * plan came from one), one build per bucket, and the model is then run once
 * per bucket on zeros of that bucket's input shapes (the plan's priming
 * shapes), so runs do no building, packing, planning or search. */
#ifndef AIT_RUNTIME_PLAN_EXEC_H
#define AIT_RUNTIME_PLAN_EXEC_H
#include "runtime/gemm_report.h"
#include "runtime/plan.h"

typedef struct plan_exec plan_exec;

/* g and p must outlive the runner. Fails, naming the module, when a plan
 * module is not in g's module tree, cannot be cut out of the graph in one
 * piece, or its candidate does not build. rep (NULL: none; it must outlive
 * the runner) hears of every GEMM the native backend runs, priming runs
 * included (gemm_report.h). */
ait_status plan_exec_create(const graph *g, const plan *p, int threads, gemm_report *rep,
                            plan_exec **out, ait_error *e);
/* As plan_exec_create, for the first runner of a model whose plan came from
 * an artifact (g: the model's graph): frees the data of g's constants that
 * nothing the runner runs reads any more: every bucket's build of every
 * module reading it says it releases it (backend.releases: a prepared blob
 * replaced it), and no node run on the reference (outside a module, or a
 * module on the baseline) nor a graph output reads it. Each module's are
 * freed as soon as its builds are done, before the next module is built and
 * before the priming runs, so the parsed weights are never resident beside
 * every build and the priming's buffers (the load's peak stays the peak). A
 * module not built yet keeps what it reads. The tensors keep their shape
 * and dtype (data NULL), so module views sharing them see the same. A
 * runner made later from the same g and plan reads none of them either.
 * *freed: the bytes freed (also when creation fails: what was freed stays
 * freed). Nothing is freed in a graph with subgraphs. */
ait_status plan_exec_create_releasing(graph *g, const plan *p, int threads, gemm_report *rep,
                                      size_t *freed, plan_exec **out, ait_error *e);
/* What plan_exec_create_releasing frees (once every module is built): per value of g, whether it is a constant
 * tensor that some node reads and that nothing px runs reads any more
 * (malloc'd, g->n_vals entries; the caller frees it). NULL when nothing is
 * (a graph with subgraphs) or out of memory. */
bool *plan_exec_releasable(const plan_exec *px, const graph *g);
/* For a model loaded from an artifact, before any runner: frees the data of
 * g's constants that plan_exec_releasable will name once every module is
 * built, as the plan alone says it (p's prepared blobs bound, their data
 * not needed): a weight (input 1) of Conv, MatMul or Gemm nodes only, each
 * in a module that at every bucket runs on a backend with `releases` with a
 * prepared blob "wI." of that node (backend_prep_has_node), which its builds
 * take at every schedule or fail. So the load never holds the parsed
 * weights beside the blobs that replace them. The heap is trimmed; returns
 * the bytes freed (0 in a model with subgraphs, or a module g lacks). */
size_t plan_release_replaced(graph *g, const plan *p);
/* As exec_run: outputs[j] are owned by the runner until the next run. */
ait_status plan_exec_run(plan_exec *px, tensor *const *inputs, tensor **outputs, ait_error *e);
/* As exec_run_bound: outputs computed by a tuned module are copied once,
 * from the backend's buffer into bound[j]; the others are written in place. */
ait_status plan_exec_run_bound(plan_exec *px, tensor *const *inputs, tensor *const *bound,
                               tensor **outputs, ait_error *e);
/* The key/value caches (core/kv.h; ports the model's) the next runs append
 * in place, until called again (kv NULL: none). True when every one can be:
 * its past read only by a tuned module that writes its present on a
 * backend taking views (backend.run_kv); else false and none is set (the
 * caller copies them: api/binding.c). kv must live while set; a run sets
 * each one's copied when its backend copied it after all. */
bool plan_exec_kv_set(plan_exec *px, kv_view *kv, int n_kv);
void plan_exec_free(plan_exec *px);
/* Bytes of the arenas of the executors (one per bucket) that run the glue
 * and the baseline modules (exec_arena_bytes), with what the built modules
 * hold for their values where their backend says (backend.value_bytes:
 * native); other backends' own storage is not counted. */
size_t plan_exec_arena_bytes(const plan_exec *px);
/* Adds the schedules of px's executors and built modules to *acc
 * (exec/exec.h's sched_stats; built modules where their backend counts). */
void plan_exec_sched_stats(const plan_exec *px, sched_stats *acc);
/* How many buckets the runner primed at creation (their run on the plan's
 * priming shapes succeeded): every bucket of a plan with priming shapes. */
int plan_exec_primed(const plan_exec *px);
/* Bytes of output j of bucket k's priming run (0: not primed, or not a
 * plain tensor): what a run's output copies at that bucket will take. */
size_t plan_exec_output_bytes(const plan_exec *px, int k, int j);
/* What the build of module i's choice k prepared (its backend's save; n 0
 * when nothing), valid while px lives. For saving an artifact. */
ait_status plan_exec_prepared(plan_exec *px, int i, int k, prepared *out, ait_error *e);
/* Module i's graph as extracted for the backends (NULL when it runs inline):
 * what prepared blobs' node indices refer to (plan_blob_node). */
const graph *plan_exec_module_graph(const plan_exec *px, int i);

#endif
