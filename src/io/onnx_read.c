/* ONNX ModelProto -> graph IR: names, types, attributes, constants and the
 * wiring of nodes; which op each node runs is ops_bind's (ops/bind.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx.h"
#include "io/onnx_strip.h"
#include "io/onnx_tensor.h"
#include "io/pb_depth.h"
#include "onnx.pb-c.h"

typedef struct loader {
    const char *path;
    const char *dir;
    int opset;
    ait_error *e;
    int depth;
    int n_external;  /* tensors read from external data files */
    bool absent_ok;  /* initializers left out are accepted (onnx_read) */
    int n_absent;
    bool borrowed;   /* the top graph's raw_data point into the caller's buffer (borrow) */
} loader;

static ait_status load_graph(loader *L, const Onnx__GraphProto *gp, graph *parent, graph **out);

static char *dupstr(const char *s) { return strdup(s ? s : ""); }

/* The id of `name` visible from g: its own value, or a new value in g that
 * stands for the one in an enclosing graph. -1 if none exists. */
static int resolve(graph *g, const char *name)
{
    int id = graph_find_value(g, name);
    if (id >= 0 || !g->parent) return id;
    int pid = resolve(g->parent, name);
    if (pid < 0) return -1;
    id = graph_add_value(g, name);
    if (id < 0) return -1;
    const value *pv = &g->parent->vals[pid];
    value *v = &g->vals[id];
    v->outer = pid;
    v->dtype = pv->dtype;
    v->rank = pv->rank;
    memcpy(v->dims, pv->dims, sizeof v->dims);
    return id;
}

/* A map's declared type: keys int64 or string, values a tensor type (the
 * value's dtype). A sequence of maps keeps kind VAL_SEQUENCE: the ops that
 * take one check their items. */
static ait_status map_type(loader *L, value *v, const Onnx__TypeProto__Map *mt, const char *what)
{
    const Onnx__TypeProto *vt = mt ? mt->value_type : NULL;
    if (mt && mt->has_key_type && mt->key_type != AIT_I64 && mt->key_type != AIT_STRING)
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: %s '%s' is a map with %s keys; ait's maps "
                       "have int64 or string keys", L->path, what, v->name,
                       ait_dtype_name((ait_dtype)mt->key_type));
    if (vt && vt->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET &&
        (vt->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vt->tensor_type))
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: %s '%s' is a map of values that are not "
                       "tensors", L->path, what, v->name);
    const Onnx__TypeProto__Tensor *et = vt ? vt->tensor_type : NULL;
    v->dtype = et && et->has_elem_type ? (ait_dtype)et->elem_type : AIT_UNDEFINED;
    return AIT_OK;
}

/* A type, or part of one, that is not given is valid ONNX (subgraph outputs
 * often declare none): the value is left unknown and the executor infers it
 * at run time. Only types ait cannot hold are refused. */
static ait_status set_type(loader *L, value *v, const Onnx__TypeProto *tp, const char *what)
{
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return AIT_OK;
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type) {
        v->optional = true;
        tp = tp->optional_type->elem_type;
        if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return AIT_OK;
    }
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type) {
        const Onnx__TypeProto *el = tp->sequence_type->elem_type;
        bool tensor = el && el->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        bool map = el && el->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
        if (el && el->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET && !tensor && !map)
            return err_set(L->e, AIT_E_UNSUPPORTED, "%s: %s '%s' is a sequence of a type ait does "
                           "not support (sparse tensors, nested sequences)", L->path, what,
                           v->name);
        v->kind = VAL_SEQUENCE;
        if (map) return map_type(L, v, el->map_type, what);
        const Onnx__TypeProto__Tensor *et = tensor ? el->tensor_type : NULL;
        v->dtype = et && et->has_elem_type ? (ait_dtype)et->elem_type : AIT_UNDEFINED;
        return AIT_OK;
    }
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE) {
        v->kind = VAL_MAP;
        return map_type(L, v, tp->map_type, what);
    }
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: %s '%s' is of a type ait does not support "
                       "(sparse tensors, nested sequences)", L->path, what, v->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    v->dtype = tt->has_elem_type ? (ait_dtype)tt->elem_type : AIT_UNDEFINED;
    if (!tt->shape) return AIT_OK;
    if (tt->shape->n_dim > AIT_MAX_RANK)
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: %s '%s' has rank %zu, more than %d", L->path,
                       what, v->name, tt->shape->n_dim, AIT_MAX_RANK);
    v->rank = (int)tt->shape->n_dim;
    for (int i = 0; i < AIT_MAX_RANK; i++) { /* a value typed twice keeps the last */
        free(v->sym[i]);
        v->sym[i] = NULL;
    }
    for (int i = 0; i < v->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        v->dims[i] = DIM_UNKNOWN;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
            v->dims[i] = d->dim_value;
        else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
                 d->dim_param[0])
            v->sym[i] = dupstr(d->dim_param);
    }
    return AIT_OK;
}

static ait_status load_attr(loader *L, graph *g, const Onnx__AttributeProto *ap, attr *a,
                            const char *nname)
{
    a->name = dupstr(ap->name);
    a->type = ap->has_type ? (attr_type)ap->type : ATTR_UNDEFINED;
    if (ap->ref_attr_name && ap->ref_attr_name[0])
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: node '%s': attribute '%s' refers to a "
                       "function attribute", L->path, nname, a->name);
    switch (a->type) {
    case ATTR_FLOAT: a->f = ap->f; break;
    case ATTR_INT: a->i = ap->i; break;
    case ATTR_STRING:
        a->s = malloc(ap->s.len + 1);
        if (!a->s) return err_set(L->e, AIT_E_NOMEM, "out of memory");
        if (ap->s.len) memcpy(a->s, ap->s.data, ap->s.len);
        a->s[ap->s.len] = 0;
        break;
    case ATTR_TENSOR: {
        if (!ap->t) return err_set(L->e, AIT_E_PARSE, "%s: node '%s': attribute '%s' has no "
                                   "tensor", L->path, nname, a->name);
        char what[256];
        snprintf(what, sizeof what, "%s: node '%s' attribute '%s'", L->path, nname, a->name);
        TRY(tensor_from_proto(ap->t, L->dir, &a->t, what, L->e));
        L->n_external += tensor_proto_external(ap->t);
        break;
    }
    case ATTR_GRAPH:
        if (!ap->g) return err_set(L->e, AIT_E_PARSE, "%s: node '%s': attribute '%s' has no "
                                   "graph", L->path, nname, a->name);
        TRY(load_graph(L, ap->g, g, &a->g));
        break;
    case ATTR_FLOATS:
        a->n = (int)ap->n_floats;
        if (a->n) {
            a->floats = malloc(sizeof(float) * ap->n_floats);
            if (!a->floats) return err_set(L->e, AIT_E_NOMEM, "out of memory");
            memcpy(a->floats, ap->floats, sizeof(float) * ap->n_floats);
        }
        break;
    case ATTR_INTS:
        a->n = (int)ap->n_ints;
        if (a->n) {
            a->ints = malloc(sizeof(int64_t) * ap->n_ints);
            if (!a->ints) return err_set(L->e, AIT_E_NOMEM, "out of memory");
            memcpy(a->ints, ap->ints, sizeof(int64_t) * ap->n_ints);
        }
        break;
    case ATTR_STRINGS:
        a->strings = calloc(ap->n_strings + 1, sizeof(char *));
        if (!a->strings) return err_set(L->e, AIT_E_NOMEM, "out of memory");
        for (size_t i = 0; i < ap->n_strings; i++) {
            a->strings[i] = malloc(ap->strings[i].len + 1);
            if (!a->strings[i]) return err_set(L->e, AIT_E_NOMEM, "out of memory");
            if (ap->strings[i].len) /* an empty string may have no data */
                memcpy(a->strings[i], ap->strings[i].data, ap->strings[i].len);
            a->strings[i][ap->strings[i].len] = 0;
            a->n = (int)i + 1;
        }
        break;
    default:
        /* Sparse tensors and type protos: kept by name so ops can refuse them. */
        break;
    }
    return AIT_OK;
}

static ait_status load_node(loader *L, graph *g, const Onnx__NodeProto *np, int index)
{
    node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    g->n_nodes++;
    char autoname[64];
    snprintf(autoname, sizeof autoname, "%s_%d", np->op_type ? np->op_type : "node", index);
    n->name = dupstr(np->name && np->name[0] ? np->name : autoname);
    n->op = dupstr(np->op_type);
    n->domain = dupstr(np->domain);
    if (!n->name || !n->op || !n->domain) return err_set(L->e, AIT_E_NOMEM, "out of memory");
    if (!n->op[0])
        return err_set(L->e, AIT_E_PARSE, "%s: node '%s' has no op_type", L->path, n->name);
    /* Trailing empty names are omitted optionals: drop them from the count. */
    int n_in = (int)np->n_input, n_out = (int)np->n_output;
    while (n_in > 0 && !np->input[n_in - 1][0]) n_in--;
    while (n_out > 0 && !np->output[n_out - 1][0]) n_out--;
    if (n_in > 512 || n_out > 512)
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: node '%s' has more than 512 inputs or "
                       "outputs", L->path, n->name);
    n->in = malloc(sizeof(int) * (size_t)(n_in + 1));
    n->out = malloc(sizeof(int) * (size_t)(n_out + 1));
    n->attrs = calloc(np->n_attribute + 1, sizeof(attr));
    if (!n->in || !n->out || !n->attrs) return err_set(L->e, AIT_E_NOMEM, "out of memory");
    for (size_t i = 0; i < np->n_attribute; i++) {
        n->n_attr++;
        TRY(load_attr(L, g, np->attribute[i], &n->attrs[i], n->name));
    }
    for (int i = 0; i < n_in; i++) {
        const char *nm = np->input[i];
        n->in[i] = -1;
        n->n_in++;
        if (!nm[0]) continue; /* omitted: whether it may be is ops_bind's to say */
        n->in[i] = resolve(g, nm);
        if (n->in[i] < 0)
            return err_set(L->e, AIT_E_PARSE, "%s: node '%s' (%s): input '%s' is not produced by "
                           "an earlier node, an initializer or a graph input", L->path, n->name,
                           n->op, nm);
    }
    for (int i = 0; i < n_out; i++) {
        const char *nm = np->output[i];
        n->out[i] = -1;
        n->n_out++;
        if (!nm[0]) continue;
        if (graph_find_value(g, nm) >= 0)
            return err_set(L->e, AIT_E_PARSE, "%s: node '%s' (%s): output '%s' is defined twice",
                           L->path, n->name, n->op, nm);
        int id = graph_add_value(g, nm);
        if (id < 0) return err_set(L->e, AIT_E_NOMEM, "out of memory");
        g->vals[id].producer = g->n_nodes - 1;
        n->out[i] = id;
    }
    return AIT_OK;
}

/* Initializer tp of value id, left out of the model (ONNX_ABSENT_LOCATION,
 * digest sha): its shape alone, where the caller accepts it. */
static ait_status initializer_absent(loader *L, graph *g, int id, const Onnx__TensorProto *tp,
                                     const char *sha, const char *what)
{
    if (!L->absent_ok || L->depth > 1)
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: its data was left out (the model of an "
                       "artifact saved without the weights its prepared blobs replace); only that "
                       "artifact runs it", what);
    size_t n = strlen(sha);
    if (n != 64 || strspn(sha, "0123456789abcdef") != n)
        return err_set(L->e, AIT_E_PARSE, "%s: left out without the sha256 of its data", what);
    TRY(tensor_shape_from_proto(tp, &g->vals[id].konst, what, L->e));
    if (!(g->vals[id].absent = strdup(sha))) return err_set(L->e, AIT_E_NOMEM, "out of memory");
    L->n_absent++;
    return AIT_OK;
}

static ait_status load_graph(loader *L, const Onnx__GraphProto *gp, graph *parent, graph **out)
{
    if (++L->depth > 64) {
        L->depth--;
        return err_set(L->e, AIT_E_UNSUPPORTED, "%s: subgraphs nest deeper than 64", L->path);
    }
    graph *g = graph_new(parent, L->opset, L->path);
    if (!g) return err_set(L->e, AIT_E_NOMEM, "out of memory");
    ait_status s = AIT_OK;
    char what[512];
    for (size_t i = 0; i < gp->n_initializer && s == AIT_OK; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        snprintf(what, sizeof what, "%s: initializer '%s'", L->path, tp->name ? tp->name : "");
        int id = graph_add_value(g, tp->name);
        if (id < 0) s = err_set(L->e, AIT_E_NOMEM, "out of memory");
        const char *absent = tensor_proto_absent(tp);
        bool top = L->borrowed && L->depth == 1; /* raw_data in the caller's buffer */
        if (s == AIT_OK && absent) s = initializer_absent(L, g, id, tp, absent, what);
        else if (s == AIT_OK && top)
            s = tensor_borrow_proto(tp, L->dir, &g->vals[id].konst, what, L->e);
        else if (s == AIT_OK) s = tensor_from_proto(tp, L->dir, &g->vals[id].konst, what, L->e);
        L->n_external += !absent && tensor_proto_external(tp);
        /* Copied: free protobuf-c's copy of the bytes now (free_unpacked
         * skips NULL), so the model's weights are not held three times over
         * (file, proto, tensors) at the peak of a load. */
        Onnx__TensorProto *own = gp->initializer[i];
        if (s == AIT_OK && own->has_raw_data && own->raw_data.data) {
            if (!top) free(own->raw_data.data); /* protobuf-c's default allocator is malloc */
            own->raw_data.data = NULL;
            own->raw_data.len = 0;
        }
        if (s == AIT_OK) {
            value *v = &g->vals[id];
            v->dtype = v->konst->dtype;
            v->rank = v->konst->rank;
            memcpy(v->dims, v->konst->dims, sizeof v->dims);
        }
    }
    if (s == AIT_OK && gp->n_sparse_initializer)
        s = err_set(L->e, AIT_E_UNSUPPORTED, "%s: sparse initializers are not supported", L->path);
    g->inputs = calloc(gp->n_input + 1, sizeof(int));
    g->outputs = calloc(gp->n_output + 1, sizeof(int));
    g->nodes = calloc(gp->n_node + 1, sizeof(node));
    if (s == AIT_OK && (!g->inputs || !g->outputs || !g->nodes))
        s = err_set(L->e, AIT_E_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_input && s == AIT_OK; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !vi->name[0]) {
            s = err_set(L->e, AIT_E_PARSE, "%s: graph input %zu has no name", L->path, i);
            break;
        }
        if (graph_find_value(g, vi->name) >= 0) continue; /* an initializer: a constant */
        int id = graph_add_value(g, vi->name);
        if (id < 0) {
            s = err_set(L->e, AIT_E_NOMEM, "out of memory");
            break;
        }
        g->vals[id].is_input = true;
        g->inputs[g->n_inputs++] = id;
        s = set_type(L, &g->vals[id], vi->type, "input");
    }
    g->cap_nodes = (int)gp->n_node;
    for (size_t i = 0; i < gp->n_node && s == AIT_OK; i++) s = load_node(L, g, gp->node[i], (int)i);
    for (size_t i = 0; i < gp->n_output && s == AIT_OK; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        int id = vi->name ? resolve(g, vi->name) : -1;
        if (id < 0) {
            s = err_set(L->e, AIT_E_PARSE, "%s: graph output '%s' is not produced by any node",
                        L->path, vi->name ? vi->name : "");
            break;
        }
        value *v = &g->vals[id];
        v->is_output = true;
        g->outputs[g->n_outputs++] = id;
        if (v->producer >= 0 || v->outer >= 0) {
            ait_dtype known = v->dtype;
            s = set_type(L, v, vi->type, "output");
            if (known != AIT_UNDEFINED && v->dtype == AIT_UNDEFINED) v->dtype = known;
        }
    }
    L->depth--;
    if (s != AIT_OK) {
        graph_free(g);
        return s;
    }
    *out = g;
    return AIT_OK;
}

/* The model in buf unpacked into *mp (NULL: not a valid model); with borrow,
 * without its top graph's raw_data (onnx_strip_raw), which then point into
 * buf (*borrowed; protobuf-c must not free them: unborrow). Fails only for
 * memory. */
static ait_status unpack(const uint8_t *buf, size_t len, bool borrow, Onnx__ModelProto **mp,
                         bool *borrowed, ait_error *e)
{
    uint8_t *lean = NULL;
    size_t lean_len = 0, n = 0;
    onnx_span *sp = NULL;
    *borrowed = false;
    *mp = NULL;
    if (borrow) TRY(onnx_strip_raw(buf, len, &lean, &lean_len, &sp, &n, e));
    if (lean) {
        *mp = onnx__model_proto__unpack(NULL, lean_len, lean);
        free(lean);
        if (*mp && (*mp)->graph && (*mp)->graph->n_initializer == n) {
            for (size_t i = 0; i < n; i++) {
                Onnx__TensorProto *tp = (*mp)->graph->initializer[i];
                if (!sp[i].set) continue;
                tp->has_raw_data = 1;
                tp->raw_data.data = (uint8_t *)sp[i].p;
                tp->raw_data.len = sp[i].len;
            }
            *borrowed = true;
        } else if (*mp) { /* not as scanned (cannot happen): unpacked as it is */
            onnx__model_proto__free_unpacked(*mp, NULL);
            *mp = NULL;
        }
        free(sp);
    }
    if (!*borrowed) *mp = onnx__model_proto__unpack(NULL, len, buf);
    return AIT_OK;
}

/* Forgets the borrowed raw_data before protobuf-c frees the rest. */
static void unborrow(Onnx__ModelProto *mp)
{
    for (size_t i = 0; mp->graph && i < mp->graph->n_initializer; i++) {
        mp->graph->initializer[i]->raw_data.data = NULL;
        mp->graph->initializer[i]->raw_data.len = 0;
    }
}

ait_status onnx_read(const uint8_t *buf, size_t len, const char *name, const char *dir,
                     bool absent_ok, bool borrow, onnx_model *out, ait_error *e)
{
    memset(out, 0, sizeof *out);
    TRY(pb_check_model(buf, len, name, e));
    bool borrowed;
    Onnx__ModelProto *mp;
    TRY(unpack(buf, len, borrow, &mp, &borrowed, e));
    if (!mp)
        return err_set(e, AIT_E_PARSE, "%s: not a valid ONNX model (the protobuf is truncated or "
                       "corrupt)", name);
    ait_status s = AIT_OK;
    out->ir_version = mp->ir_version;
    if (!(out->producer = dupstr(mp->producer_name))) s = err_set(e, AIT_E_NOMEM, "out of memory");
    for (size_t i = 0; s == AIT_OK && i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
        if (onnx_domain_default(op->domain))
            out->opset = op->version > INT32_MAX ? INT32_MAX : (int)op->version;
        else if (strcmp(op->domain, ONNX_ML_DOMAIN) == 0)
            out->ml_opset = op->version > INT32_MAX ? INT32_MAX : (int)op->version;
    }
    if (s == AIT_OK && !mp->graph) s = err_set(e, AIT_E_PARSE, "%s: the model has no graph", name);
    if (s == AIT_OK && mp->n_opset_import == 0) out->opset = 1; /* IR < 3 default */
    if (s == AIT_OK) {
        loader L = {.path = name, .dir = dir, .opset = out->opset, .e = e, .absent_ok = absent_ok,
                    .borrowed = borrowed};
        s = load_graph(&L, mp->graph, NULL, &out->g);
        out->n_external = L.n_external;
        out->n_absent = L.n_absent;
    }
    if (borrowed) unborrow(mp);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (s != AIT_OK) onnx_model_clear(out);
    return s;
}

void onnx_model_clear(onnx_model *om)
{
    graph_free(om->g);
    free(om->producer);
    memset(om, 0, sizeof *om);
}
