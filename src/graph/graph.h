/* The graph IR: values (named tensors, possibly constant), nodes in
 * topological order, attributes, and subgraphs (If branches) that see the
 * values of the graph around them. */
#ifndef AIT_GRAPH_GRAPH_H
#define AIT_GRAPH_GRAPH_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/tensor.h"

struct op_def;
struct graph;

typedef enum attr_type {
    ATTR_UNDEFINED = 0,
    ATTR_FLOAT = 1,
    ATTR_INT = 2,
    ATTR_STRING = 3,
    ATTR_TENSOR = 4,
    ATTR_GRAPH = 5,
    ATTR_FLOATS = 6,
    ATTR_INTS = 7,
    ATTR_STRINGS = 8,
} attr_type;

typedef struct attr {
    char *name;
    attr_type type;
    float f;
    int64_t i;
    char *s;          /* NUL-terminated copy */
    tensor *t;        /* ATTR_TENSOR: owned constant */
    struct graph *g;  /* ATTR_GRAPH: owned subgraph */
    int n;            /* element count of floats / ints / strings */
    float *floats;
    int64_t *ints;
    char **strings;
} attr;

typedef struct node {
    char *name;   /* never NULL (the loader names unnamed nodes "OpType_#") */
    char *op;     /* op_type */
    char *domain; /* "" for the default domain */
    int n_in, n_out;
    int *in;      /* value ids; -1 for an omitted optional input */
    int *out;     /* value ids; -1 for an omitted optional output */
    int n_attr;
    attr *attrs;
    const struct op_def *def; /* resolved at load */
    int version;              /* the op version the node runs (the highest since_version
                                 <= its domain's opset), set with def; 0 before */
    bool dead;                /* removed by a pass */
} node;

/* The classic-ML domain, which models import with an opset of its own. */
#define ONNX_ML_DOMAIN "ai.onnx.ml"

/* Whether `domain` names ONNX's default domain ("", "ai.onnx"; NULL too). */
static inline bool onnx_domain_default(const char *domain)
{
    return !domain || !domain[0] || !strcmp(domain, "ai.onnx");
}

#define DIM_UNKNOWN (-1)

typedef struct value {
    char *name;
    ait_dtype dtype;      /* AIT_UNDEFINED while unknown */
    int rank;             /* -1 while unknown */
    int64_t dims[AIT_MAX_RANK]; /* DIM_UNKNOWN where not known */
    char *sym[AIT_MAX_RANK];    /* declared symbolic name, or NULL */
    tensor *konst;        /* constant data (initializer, Constant, folded), owned */
    char *absent;         /* konst's data was left out of the model (an artifact's lean
                             model, io/onnx.h): the sha256 hex of its bytes; else NULL */
    int producer;         /* node index, -1 for inputs and constants */
    int outer;            /* in a subgraph: id of the same value in the parent, else -1 */
    val_kind kind;        /* declared: tensor, sequence or map (dtype: a map's values) */
    bool optional;        /* declared optional: may also be none */
    bool is_input, is_output;
} value;

typedef struct graph {
    value *vals;
    int n_vals, cap_vals;
    node *nodes;
    int n_nodes, cap_nodes;
    int *inputs;   /* graph inputs that are not initializers */
    int n_inputs;
    int *outputs;
    int n_outputs;
    struct graph *parent; /* for subgraphs */
    int opset;            /* default-domain opset of the model */
    const char *path;     /* model file, for messages (owned by the model) */
    bool borrowed;        /* a view made by graph_extract: names, constants and
                             attributes belong to the graph it was cut from */
} graph;

graph *graph_new(graph *parent, int opset, const char *path);
void graph_free(graph *g);
/* Frees what node n owns (not the node itself, which lives in g->nodes). */
void node_clear(node *n);
/* Adds a value; returns its id or -1 when out of memory. */
int graph_add_value(graph *g, const char *name);
/* Id of the value called `name` in g only (-1 if none). */
int graph_find_value(const graph *g, const char *name);
/* "its inputs are 'a', 'b'" (or "its input is 'a'", "it has no inputs"),
 * for a message about a name that is none of the graph's inputs; returns
 * buf, truncated to n. */
const char *graph_input_names(const graph *g, char *buf, size_t n);

/* The values of g that node n's subgraphs read (the subgraphs' values with
 * an `outer` id; a nested subgraph reaches g through a proxy value of its
 * parent, so the first level holds them all): *list gets them each once,
 * -1-terminated, malloc'd (NULL when there are none), *count how many. */
ait_status node_captures(const node *n, int **list, int *count, ait_error *e);

/* Attribute lookup by name (NULL if absent). */
const attr *node_attr(const node *n, const char *name);
int64_t attr_int(const node *n, const char *name, int64_t dflt);
float attr_float(const node *n, const char *name, float dflt);
/* The string attribute or dflt. */
const char *attr_str(const node *n, const char *name, const char *dflt);
/* The ints attribute: sets *count and returns the array, or NULL if absent. */
const int64_t *attr_ints(const node *n, const char *name, int *count);
const float *attr_floats(const node *n, const char *name, int *count);

#endif
