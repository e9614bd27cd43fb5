/* cuDNN's backend (graph) API: descriptors followed as the program builds
 * them, and each cudnnBackendExecute traced as the emulated cuDNN traces it.
 *
 * Beside every real descriptor the program makes, the profiler keeps one
 * of the emulated cuDNN's own (emulator/cudnn/be_store.h), to which it
 * applies what the program's calls did to the real one once they succeed:
 * attributes set (descriptor-valued ones as clones of the descriptors'
 * followers), cleared, finalized. Values the real library computes are
 * read from it: a plan's workspace when it is finalized, and the engine
 * configurations heuristics return (their engine's global index; the graph
 * is the heuristics' own). At cudnnBackendExecute, the emulator's
 * recognition (emulator/cudnn/be_trace.c) turns the plan's graph into
 * MAYA_REC_DNN records, the same the emulator writes; each is measured
 * between events recorded on the handle's stream around the one real call
 * (a graph of several recognised operations gives each of them the whole
 * call's time). A plan whose graph the profiler did not see being built
 * (deserialised from JSON, say) is one record of op OTHER.
 *
 * Costs: a descriptor call costs a table lookup and a copy of what it set
 * (descriptor-valued attributes are deep copies, as in the emulator);
 * executing costs the recognition (a walk over the graph's operations)
 * and two event records per record, once per call. */
#include "prof.h"

#include <stdlib.h>
#include <string.h>

#include "be_trace.h"

#define DNN_REAL(NAME) PROF_REAL(prof_cudnn, NAME)

static struct prof_table followers = PROF_TABLE_INIT;

static struct be_desc *follower(const void *real)
{
    return real ? (struct be_desc *)(uintptr_t)prof_table_get(&followers, real) : NULL;
}

/* A descriptor the program made: followed from now on (a follower left
 * behind by a handle the library reuses goes). */
static void follow_new(cudnnBackendDescriptor_t desc, int type)
{
    struct be_desc *f = be_new(type);
    be_free((struct be_desc *)(uintptr_t)prof_table_take(&followers, desc));
    if (f)
        prof_table_put(&followers, desc, (uint64_t)(uintptr_t)f);
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *desc)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendCreateDescriptor, CUDNN_STATUS_NOT_SUPPORTED);
    PROF_BODY(cudnnStatus_t, real(type, desc),
              if (r_ == CUDNN_STATUS_SUCCESS && desc && *desc) follow_new(*desc, (int)type), );
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t desc)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendDestroyDescriptor, CUDNN_STATUS_NOT_SUPPORTED);
    PROF_BODY(cudnnStatus_t, real(desc),
              if (r_ == CUDNN_STATUS_SUCCESS && desc)
                  be_free((struct be_desc *)(uintptr_t)prof_table_take(&followers, desc)), );
}

cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t desc)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendInitialize, CUDNN_STATUS_NOT_SUPPORTED);
    struct be_desc *f;
    PROF_BODY(cudnnStatus_t, real(desc), if (r_ == CUDNN_STATUS_SUCCESS && (f = follower(desc))) be_clear(f), );
}

/* The attribute the program set, on f: descriptor values become clones of
 * their followers (none stored when one has no follower). */
static void follow_set(struct be_desc *f, int name, int type, int64_t count, const void *elements)
{
    if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR || count <= 0) {
        be_put(f, name, type, count, elements);
        return;
    }
    struct be_desc **refs = malloc((size_t)count * sizeof *refs);
    int64_t i = 0;
    while (refs && i < count && (refs[i] = follower(((void *const *)elements)[i])))
        i++;
    if (refs && i == count)
        be_put(f, name, type, count, refs);
    free(refs);
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void *elements)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendSetAttribute, CUDNN_STATUS_NOT_SUPPORTED);
    struct be_desc *f;
    PROF_BODY(cudnnStatus_t, real(desc, name, type, count, elements),
              if (r_ == CUDNN_STATUS_SUCCESS && (f = follower(desc)))
                  follow_set(f, (int)name, (int)type, count, elements), );
}

/* An INT64 attribute of a real descriptor, read from the real library. */
static int real_int64(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, int64_t *v)
{
    cudnnStatus_t (*get)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t, cudnnBackendAttributeType_t,
                         int64_t, int64_t *, void *) = DNN_REAL(cudnnBackendGetAttribute);
    int64_t n = 0;
    return get && get(d, name, CUDNN_TYPE_INT64, 1, &n, v) == CUDNN_STATUS_SUCCESS && n == 1;
}

/* The global index of the engine a real engine configuration holds, -1 if
 * it cannot be read. */
static int64_t real_engine_index(cudnnBackendDescriptor_t cfg)
{
    cudnnStatus_t (*create)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *) =
        DNN_REAL(cudnnBackendCreateDescriptor);
    cudnnStatus_t (*destroy)(cudnnBackendDescriptor_t) = DNN_REAL(cudnnBackendDestroyDescriptor);
    cudnnStatus_t (*get)(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t, cudnnBackendAttributeType_t,
                         int64_t, int64_t *, void *) = DNN_REAL(cudnnBackendGetAttribute);
    cudnnBackendDescriptor_t engine = NULL;
    int64_t index = -1, n = 0;
    if (!create || !destroy || !get || create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS)
        return -1;
    if (get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine) != CUDNN_STATUS_SUCCESS ||
        n != 1 || !real_int64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &index))
        index = -1;
    destroy(engine);
    return index;
}

/* An engine configuration heuristics returned into the program's
 * descriptor real: its engine runs the heuristics' graph. */
static void follow_heuristic(struct be_desc *dst, const struct be_desc *heur, cudnnBackendDescriptor_t real)
{
    const struct be_desc *g = be_ref(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);
    int64_t index = real_engine_index(real);
    struct be_desc *engine = be_new(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    be_clear(dst);
    if (!engine)
        return;
    if (g)
        be_put(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    if (index >= 0)
        be_put(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    engine->finalized = 1;
    be_put(dst, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
    be_free(engine);
    dst->finalized = 1;
}

/* Descriptors the real library filled for the program (n of them): copies
 * of what the followed descriptor holds there, or heuristics' results. */
static void follow_get(const struct be_desc *src, int name, void *const *elements, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        struct be_desc *dst = follower(elements[i]);
        const struct be_desc *from = be_ref(src, name, i);
        if (!dst)
            continue;
        if (from)
            be_assign(dst, from);
        else if (src->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && name == CUDNN_ATTR_ENGINEHEUR_RESULTS)
            follow_heuristic(dst, src, elements[i]);
    }
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const desc, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                                       void *elements)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendGetAttribute, CUDNN_STATUS_NOT_SUPPORTED);
    struct be_desc *f;
    PROF_BODY(cudnnStatus_t, real(desc, name, type, requested, count, elements),
              if (r_ == CUDNN_STATUS_SUCCESS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR && elements && requested > 0 &&
                  (f = follower(desc)))
                  follow_get(f, (int)name, elements, count && *count < requested ? *count : requested), );
}

/* A descriptor the real library finalized: the follower too, and a plan
 * with the workspace the real one needs. */
static void follow_finalize(cudnnBackendDescriptor_t desc, struct be_desc *f)
{
    int64_t ws;
    f->finalized = 1;
    if (f->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
        real_int64(desc, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, &ws))
        be_put(f, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &ws);
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t desc)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendFinalize, CUDNN_STATUS_NOT_SUPPORTED);
    struct be_desc *f;
    PROF_BODY(cudnnStatus_t, real(desc), if (r_ == CUDNN_STATUS_SUCCESS && (f = follower(desc))) follow_finalize(desc, f), );
}

/* ---- execution ---- */

/* The records of one execution, collected before the real call. */
struct recs {
    struct maya_rec_dnn *r;
    int n, cap;
};

static int collect(struct maya_rec_dnn *r, void *arg)
{
    struct recs *rs = arg;
    if (rs->n == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 4;
        struct maya_rec_dnn *n = realloc(rs->r, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        rs->r = n, rs->cap = cap;
    }
    rs->r[rs->n++] = *r;
    return 0;
}

/* What the emulator would record for this execution: at least one record. */
static void recognise(struct recs *rs, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack)
{
    struct be_exec x;
    struct maya_rec_dnn base;
    const struct be_desc *p = follower(plan);
    if (p && be_exec_init(&x, &base, p, follower(pack)) == 0) {
        int n = be_trace_graph(&x, &base, collect, rs);
        if (n == 0)
            be_trace_fused(&x, &base, collect, rs);
    }
    if (rs->n)
        return;
    /* an unknown plan: its engine and workspace, if they are known */
    int64_t ws = 0;
    dnn_rec_init(&base, MAYA_DNN_OTHER);
    if (p && be_int64(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, &ws))
        base.workspace_bytes = (uint64_t)ws;
    collect(&base, rs);
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack)
{
    PROF_REAL_OR(prof_cudnn, cudnnBackendExecute, CUDNN_STATUS_NOT_SUPPORTED);
    struct prof_op op;
    if (!prof_begin(&op))
        return real(handle, plan, pack);
    struct recs rs = { 0 };
    recognise(&rs, plan, pack);
    /* each record: events on the handle's stream around the real call */
    struct prof_op *ev = calloc((size_t)(rs.n ? rs.n : 1), sizeof *ev);
    cudaStream_t stream = prof_dnn_stream(handle);
    for (int i = 0; ev && i < rs.n; i++) {
        ev[i].device = -1;
        prof_device_begin(&ev[i], stream);
    }
    prof_go(&op);
    cudnnStatus_t st = real(handle, plan, pack);
    prof_returned(&op, 0);
    for (int i = 0; ev && i < rs.n; i++)
        prof_device_end(&ev[i], st == CUDNN_STATUS_SUCCESS);
    uint32_t api = EMU_API_ID(__func__);
    if (st != CUDNN_STATUS_SUCCESS || !rs.n) {
        emu_trace_call(api, op.t0, st, 0, 0);
    } else {
        /* as the emulator writes them: the next record begins where the
         * last one ended */
        uint64_t t0 = op.t0;
        for (int i = 0; i < rs.n; i++) {
            struct prof_op *o = ev ? &ev[i] : &op;
            o->t0 = t0;
            prof_building(o);
            prof_dnn_emit(o, api, st, handle, &rs.r[i]);
            if (rs.r[i].call.t_exit_ns)
                t0 = rs.r[i].call.t_exit_ns;
        }
    }
    for (int i = 0; ev && i < rs.n; i++)
        prof_op_release(&ev[i]);
    prof_building(&op);
    prof_end(&op);
    free(ev);
    free(rs.r);
    return st;
}
