/* The loop of RecordingGraph.flush (tracing/builder.py) in C: it builds the fx node of every pending record of a
 * replayed call, in order. The Python loop in builder.py is the reference and the fallback (a machine without a C
 * compiler, LEAPP_NOTEBOOK_PURE_FLUSH=1); both do the same steps in the same order, and tests/test_flush.py checks
 * that they build the same graphs. Rare paths call back into Python: a node named by fx's own namespace (no name
 * stem), a name past the table of numbered names, a facts record not made yet for a site.
 *
 * Per pending record (its spec: op, target, name stem, facts, argument fixer, constant kwargs, memo):
 *   args, kwargs <- fixer(args, kwargs) when there is a fixer; an empty kwargs is the shared empty immutable_dict
 *   name         <- the next free name of the stem (builder._unique), or graph._name_for(target)
 *   node         <- Node.__new__(Node); _NodeBase.__init__(node, graph, name, op, target, None);
 *                   node._update_args_kwargs(args, kwargs)
 *   append(node)    (fx's name map and find_nodes table answer for the graph's nodes: builder._Names, _FindNodes)
 *   record       <- memo[1] when memo[0] == site, else memo[2][site], else new_record(memo, facts, site);
 *                   memo[0], memo[1] = site, record
 *   node.meta[KEY] = record; pending.node = node
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <structmember.h>

/* The pending record of a replayed call (provenance.Pending's C form): made by pend(), read by the flush without an
 * attribute lookup. Unset fields raise AttributeError, as the Python class's slots do. */
typedef struct {
    PyObject_HEAD
    PyObject *spec, *args, *kwargs, *site, *node;
} PendingObject;

static int
pending_traverse(PendingObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->spec);
    Py_VISIT(self->args);
    Py_VISIT(self->kwargs);
    Py_VISIT(self->site);
    Py_VISIT(self->node);
    return 0;
}

static int
pending_clear(PendingObject *self)
{
    Py_CLEAR(self->spec);
    Py_CLEAR(self->args);
    Py_CLEAR(self->kwargs);
    Py_CLEAR(self->site);
    Py_CLEAR(self->node);
    return 0;
}

static void
pending_dealloc(PendingObject *self)
{
    PyObject_GC_UnTrack(self);
    pending_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef pending_members[] = {
    {"spec", T_OBJECT_EX, offsetof(PendingObject, spec), 0, NULL},
    {"args", T_OBJECT_EX, offsetof(PendingObject, args), 0, NULL},
    {"kwargs", T_OBJECT_EX, offsetof(PendingObject, kwargs), 0, NULL},
    {"site", T_OBJECT_EX, offsetof(PendingObject, site), 0, NULL},
    {"node", T_OBJECT_EX, offsetof(PendingObject, node), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "leapp_notebook.tracing._flush.Pending",
    .tp_basicsize = sizeof(PendingObject),
    .tp_dealloc = (destructor)pending_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A graph node recorded but not built yet (see tracing/provenance.py's Pending).",
    .tp_traverse = (traverseproc)pending_traverse,
    .tp_clear = (inquiry)pending_clear,
    .tp_members = pending_members,
    .tp_new = PyType_GenericNew,
};

/* pending.<field> (a new reference): read directly from the C form, through getattr from any other object. */
static PyObject *
field(PyObject *pending, size_t offset, PyObject *name)
{
    if (Py_TYPE(pending) == &PendingType) {
        PyObject *value = *(PyObject **)((char *)pending + offset);
        if (value == NULL) {
            PyErr_SetObject(PyExc_AttributeError, name);
            return NULL;
        }
        return Py_NewRef(value);
    }
    return PyObject_GetAttr(pending, name);
}

/* Set once by setup(): the objects every flush uses. */
static PyObject *new_node, *node_type, *init_node, *no_kwargs, *facts_key, *never_bare, *numbered_table,
    *numbered_fn, *new_record;
static PyObject *s_spec, *s_args, *s_kwargs, *s_site, *s_node, *s_meta, *s_update, *s_name_for;

static PyObject *
setup(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9) {
        PyErr_SetString(PyExc_TypeError, "setup takes 9 arguments");
        return NULL;
    }
    PyObject **slots[9] = {&new_node, &node_type, &init_node, &no_kwargs, &facts_key, &never_bare,
                           &numbered_table, &numbered_fn, &new_record};
    for (int i = 0; i < 9; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

/* names[num] when the list of numbered names holds it (a new reference), else numbered_fn(base, num). */
static PyObject *
numbered(PyObject *names, PyObject *base, Py_ssize_t num)
{
    if (names != NULL && num < PyList_GET_SIZE(names)) {
        PyObject *name = PyList_GET_ITEM(names, num);
        Py_INCREF(name);
        return name;
    }
    PyObject *n = PyLong_FromSsize_t(num);
    if (n == NULL)
        return NULL;
    PyObject *name = PyObject_CallFunctionObjArgs(numbered_fn, base, n, NULL);
    Py_DECREF(n);
    return name;
}

/* builder._unique: the next free node name of stem `base`, added to `used`, its count kept in `counts`. */
static PyObject *
unique(PyObject *used, PyObject *counts, PyObject *base)
{
    Py_ssize_t num = 0;
    PyObject *count = PyDict_GetItemWithError(counts, base);
    if (count != NULL) {
        num = PyLong_AsSsize_t(count);
        if (num == -1 && PyErr_Occurred())
            return NULL;
    }
    else if (PyErr_Occurred())
        return NULL;
    PyObject *names = PyDict_GetItemWithError(numbered_table, base);
    if (names == NULL && PyErr_Occurred())
        return NULL;
    if (names != NULL && !PyList_CheckExact(names))
        names = NULL;  /* not the table's own list: numbered_fn answers */
    Py_XINCREF(names);
    PyObject *name;
    int bare = PySet_Contains(never_bare, base);
    if (bare < 0)
        goto error;
    if (bare) {
        num += 1;
        name = numbered(names, base, num);
        if (name == NULL)
            goto error;
    }
    else {
        name = base;
        Py_INCREF(name);
    }
    for (;;) {
        int taken = PySet_Contains(used, name);
        if (taken < 0)
            goto error_name;
        if (!taken)
            break;
        Py_DECREF(name);
        num += 1;
        name = numbered(names, base, num);
        if (name == NULL)
            goto error;
    }
    Py_XDECREF(names);
    if (PySet_Add(used, name) < 0) {
        Py_DECREF(name);
        return NULL;
    }
    PyObject *n = PyLong_FromSsize_t(num);
    if (n == NULL || PyDict_SetItem(counts, base, n) < 0) {
        Py_XDECREF(n);
        Py_DECREF(name);
        return NULL;
    }
    Py_DECREF(n);
    return name;
error_name:
    Py_DECREF(name);
error:
    Py_XDECREF(names);
    return NULL;
}

/* One pending record's node; 0 on success. */
static int
build(PyObject *pending, PyObject *graph, PyObject *used, PyObject *counts, PyObject *append)
{
    int status = -1;
    PyObject *spec = NULL, *args = NULL, *kwargs = NULL, *name = NULL, *node = NULL, *result = NULL, *site = NULL,
             *record = NULL, *meta = NULL;
    spec = field(pending, offsetof(PendingObject, spec), s_spec);
    if (spec == NULL)
        goto done;
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 7) {
        PyErr_SetString(PyExc_TypeError, "a pending record's spec is not a 7-tuple");
        goto done;
    }
    PyObject *op = PyTuple_GET_ITEM(spec, 0), *target = PyTuple_GET_ITEM(spec, 1),
             *base = PyTuple_GET_ITEM(spec, 2), *state = PyTuple_GET_ITEM(spec, 3),
             *fix = PyTuple_GET_ITEM(spec, 4), *memo = PyTuple_GET_ITEM(spec, 6);
    kwargs = PyTuple_GET_ITEM(spec, 5);
    if (kwargs == Py_None)
        kwargs = field(pending, offsetof(PendingObject, kwargs), s_kwargs);
    else
        Py_INCREF(kwargs);
    if (kwargs == NULL)
        goto done;
    args = field(pending, offsetof(PendingObject, args), s_args);
    if (args == NULL)
        goto done;
    if (fix != Py_None) {
        PyObject *fixed = PyObject_CallFunctionObjArgs(fix, args, kwargs, NULL);
        if (fixed == NULL)
            goto done;
        if (!PyTuple_Check(fixed) || PyTuple_GET_SIZE(fixed) != 2) {
            Py_DECREF(fixed);
            PyErr_SetString(PyExc_TypeError, "an argument fixer did not return (args, kwargs)");
            goto done;
        }
        Py_SETREF(args, Py_NewRef(PyTuple_GET_ITEM(fixed, 0)));
        Py_SETREF(kwargs, Py_NewRef(PyTuple_GET_ITEM(fixed, 1)));
        Py_DECREF(fixed);
    }
    int truth = PyObject_IsTrue(kwargs);
    if (truth < 0)
        goto done;
    if (!truth)
        Py_SETREF(kwargs, Py_NewRef(no_kwargs));
    if (base != Py_None)
        name = unique(used, counts, base);
    else
        name = PyObject_CallMethodOneArg(graph, s_name_for, target);
    if (name == NULL)
        goto done;
    node = PyObject_CallOneArg(new_node, node_type);
    if (node == NULL)
        goto done;
    {
        PyObject *call[6] = {node, graph, name, op, target, Py_None};
        result = PyObject_Vectorcall(init_node, call, 6, NULL);
    }
    if (result == NULL)
        goto done;
    Py_CLEAR(result);
    {
        PyObject *call[3] = {node, args, kwargs};
        result = PyObject_VectorcallMethod(s_update, call, 3, NULL);
    }
    if (result == NULL)
        goto done;
    Py_CLEAR(result);
    result = PyObject_CallOneArg(append, node);
    if (result == NULL)
        goto done;
    Py_CLEAR(result);
    site = field(pending, offsetof(PendingObject, site), s_site);
    if (site == NULL)
        goto done;
    if (!PyList_CheckExact(memo) || PyList_GET_SIZE(memo) != 3) {
        PyErr_SetString(PyExc_TypeError, "a pending record's memo is not a list of 3");
        goto done;
    }
    /* (memo's items held while compared and looked up: either may run Python code that changes memo) */
    PyObject *last = Py_NewRef(PyList_GET_ITEM(memo, 0));
    int same = PyObject_RichCompareBool(last, site, Py_EQ);
    Py_DECREF(last);
    if (same < 0)
        goto done;
    if (same) {
        record = Py_NewRef(PyList_GET_ITEM(memo, 1));
    }
    else {
        PyObject *by_site = Py_NewRef(PyList_GET_ITEM(memo, 2));
        if (PyDict_CheckExact(by_site)) {
            record = PyDict_GetItemWithError(by_site, site);
            Py_XINCREF(record);
        }
        Py_DECREF(by_site);
        if (record == NULL && PyErr_Occurred())
            goto done;
        if (record == NULL) {
            record = PyObject_CallFunctionObjArgs(new_record, memo, state, site, NULL);
            if (record == NULL)
                goto done;
        }
        if (PyList_SetItem(memo, 0, Py_NewRef(site)) < 0 || PyList_SetItem(memo, 1, Py_NewRef(record)) < 0)
            goto done;
    }
    meta = PyObject_GetAttr(node, s_meta);
    if (meta == NULL || PyObject_SetItem(meta, facts_key, record) < 0)
        goto done;
    /* A meta dict holding only the facts record is not part of any cycle (a record holds nothing of a node or a
     * graph): the collector need not walk it. CPython tracks it again as soon as anything it may need to walk is
     * added (fx's passes and torch.export write meta), so this changes what the collector walks, never what it
     * frees. One tracked object less per node. */
    if (PyDict_CheckExact(meta) && PyDict_GET_SIZE(meta) == 1 && PyObject_GC_IsTracked(meta))
        PyObject_GC_UnTrack(meta);
    if (Py_TYPE(pending) == &PendingType)
        Py_XSETREF(((PendingObject *)pending)->node, Py_NewRef(node));
    else if (PyObject_SetAttr(pending, s_node, node) < 0)
        goto done;
    status = 0;
done:
    Py_XDECREF(spec);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    Py_XDECREF(name);
    Py_XDECREF(node);
    Py_XDECREF(result);
    Py_XDECREF(site);
    Py_XDECREF(record);
    Py_XDECREF(meta);
    return status;
}

/* flush(log, graph, used, counts, append) -> the number of nodes built. On an error the nodes built before it stay
 * in the graph, as in the Python loop. */
static PyObject *
flush(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "flush takes 5 arguments");
        return NULL;
    }
    if (new_node == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "flush before setup");
        return NULL;
    }
    PyObject *log = args[0], *graph = args[1], *used = args[2], *counts = args[3], *append = args[4];
    if (!PyList_CheckExact(log) || !PySet_Check(used) || !PyDict_Check(counts)) {
        PyErr_SetString(PyExc_TypeError, "flush(list, graph, set, dict, callable)");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(log);
    for (Py_ssize_t i = 0; i < n && i < PyList_GET_SIZE(log); i++) {
        PyObject *pending = PyList_GET_ITEM(log, i);
        Py_INCREF(pending);
        int status = build(pending, graph, used, counts, append);
        Py_DECREF(pending);
        if (status < 0)
            return NULL;
    }
    return PyLong_FromSsize_t(n);
}

/* pend(log, spec, args, site) -> a new Pending (kwargs unset, node None), appended to the list log: what a
 * replayed call does for each of its nodes (tracing/replay.py's generated code, tensor.py's fast path). */
static PyObject *
pend(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "pend(log: list, spec, args, site)");
        return NULL;
    }
    PendingObject *pending = PyObject_GC_New(PendingObject, &PendingType);
    if (pending == NULL)
        return NULL;
    pending->spec = Py_NewRef(args[1]);
    pending->args = Py_NewRef(args[2]);
    pending->kwargs = NULL;
    pending->site = Py_NewRef(args[3]);
    pending->node = Py_NewRef(Py_None);
    PyObject_GC_Track(pending);
    if (PyList_Append(args[0], (PyObject *)pending) < 0) {
        Py_DECREF(pending);
        return NULL;
    }
    return (PyObject *)pending;
}


/* ---------------------------------------------------------------------------------------------------------------
 * The ufunc hook's hot path in C (TracedArray.__array_ufunc__, tracing/array.py, is the reference and the fallback):
 * `np.tanh(h)`, `h * 0.5`, `(h - MEAN) / STD` while a trace runs in this thread, one or two operands, each a traced
 * array, a Python float, int or bool, or a plain ndarray. It reads each operand's part of the replay key as the
 * Python head does, runs NumPy's call on the plain operands with the session suspended, and replays a recorded call
 * of a row LEAPP records whose template wraps (template.direct) itself. Every other case goes on in Python:
 *   - not that kind of call (keywords, another method, three operands, an operand of another type, no session,
 *     another thread, a suspended session): the Python hook, with the same arguments;
 *   - NumPy's result computed but not that replay (no builder, no row, a closed node, a row LEAPP does not record,
 *     replay off, a result that is not an ndarray, an operand written in place in this trace, an operand from
 *     another node, no template for the key, one that must not be replayed, one made from aliased operands, one that
 *     reports something or is not compiled yet): array.py's _ufunc_tail, with what the head read.
 * The hook has no Python frame: its cell line comes from Session.where_hook (a site finder one frame shallower).
 * ------------------------------------------------------------------------------------------------------------- */


/* SiteFinder(code, sites, fallback): Session.where_hook, the C hook's site finder. Called, it gives the site of its
 * caller's frame (the C hook has no frame of its own: the frame running is the one that called NumPy): sites[f_lasti
 * // 2] of a frame running `code` with no f_trace, the one site tuple of its line (provenance.site_finder's fast
 * case); any other frame, fallback() (provenance.site_finder at depth 1: the frame walk). */
typedef struct {
    PyObject_HEAD
    PyObject *code, *sites, *fallback;
} SiteFinderObject;

static PyObject *s_f_trace, *s_session, *s_array_type, *s_version, *s_lost, *s_line, *s_fingerprint;

static int
site_finder_traverse(SiteFinderObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->code);
    Py_VISIT(self->sites);
    Py_VISIT(self->fallback);
    return 0;
}

static int
site_finder_clear(SiteFinderObject *self)
{
    Py_CLEAR(self->code);
    Py_CLEAR(self->sites);
    Py_CLEAR(self->fallback);
    return 0;
}

static void
site_finder_dealloc(SiteFinderObject *self)
{
    PyObject_GC_UnTrack(self);
    site_finder_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
site_finder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *code, *sites, *fallback;
    if (!PyArg_ParseTuple(args, "O!O!O:SiteFinder", &PyCode_Type, &code, &PyList_Type, &sites, &fallback))
        return NULL;
    SiteFinderObject *self = (SiteFinderObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->code = Py_NewRef(code);
    self->sites = Py_NewRef(sites);
    self->fallback = Py_NewRef(fallback);
    return (PyObject *)self;
}

static PyObject *
find_site(SiteFinderObject *self)
{
    PyFrameObject *frame = PyEval_GetFrame(); /* borrowed */
    if (frame != NULL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        Py_DECREF(code); /* compared by identity only: the frame holds it */
        if ((PyObject *)code == self->code) {
            PyObject *trace = PyObject_GetAttr((PyObject *)frame, s_f_trace);
            if (trace == NULL)
                return NULL;
            Py_DECREF(trace);
            int lasti = PyFrame_GetLasti(frame);
            if (trace == Py_None && lasti >= 0) {
                Py_ssize_t unit = lasti / 2;
                if (unit < PyList_GET_SIZE(self->sites)) {
                    PyObject *site = PyList_GET_ITEM(self->sites, unit);
                    if (site != Py_None)
                        return Py_NewRef(site);
                }
            }
        }
    }
    return PyObject_CallNoArgs(self->fallback);
}

static PyObject *
site_finder_call(SiteFinderObject *self, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "a site finder takes no arguments");
        return NULL;
    }
    return find_site(self);
}

static PyTypeObject SiteFinderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "leapp_notebook.tracing._flush.SiteFinder",
    .tp_basicsize = sizeof(SiteFinderObject),
    .tp_dealloc = (destructor)site_finder_dealloc,
    .tp_call = (ternaryfunc)site_finder_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "SiteFinder(code, sites, fallback): the site of the caller's frame (see tracing/_flush.c).",
    .tp_traverse = (traverseproc)site_finder_traverse,
    .tp_clear = (inquiry)site_finder_clear,
    .tp_new = site_finder_new,
};

static PyObject *traced_type, *ndarray_type, *view_fn, *session_dict, *replay_dict, *ufunc_rows, *ufunc_marker,
    *no_template, *one_operand, *tail_fn, *python_hook, *constant_part_fn;
static PyObject *s_active, *s_suspended, *s_thread, *s_lp, *s_plain, *s_dtype, *s_shape, *s_builder, *s_closed,
    *s_leapp, *s_enabled, *s_versions, *s_build, *s_templates, *s_aliases, *s_wraps, *s_direct, *s_where,
    *s_where_hook, *s_call, *s_x0, *s_x1, *s_node_field, *s_one;

/* Where a class's __slots__ member lives in its instances (-1: not a plain object slot of that class): the hook reads
 * traced arrays' and provenance records' fields there, as the member descriptor does, without the attribute lookup. */
static Py_ssize_t lp_offset = -1, builder_offset = -1, node_offset = -1, plain_offset = -1, aliases_offset = -1,
    wraps_offset = -1, direct_offset = -1, version_offset = -1, lost_offset = -1, line_offset = -1,
    fingerprint_offset = -1;
static PyObject *provenance_type, *template_type, *derived_fn, *version_fn;
static int set_up(void);

static Py_ssize_t
slot_offset(PyObject *type, const char *name)
{
    PyObject *descr = PyDict_GetItemString(((PyTypeObject *)type)->tp_dict, name); /* borrowed */
    if (descr == NULL || Py_TYPE(descr) != &PyMemberDescr_Type)
        return -1;
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    return (member->type == T_OBJECT_EX || member->type == T_OBJECT) && !(member->flags & READ_RESTRICTED)
               ? member->offset : -1;
}

/* obj.<name>, a new reference: read from the slot at `offset` when obj is exactly of the class it was found in and
 * the slot is set (an unset one, or any other object, goes through getattr: its error, its descriptor). */
static inline PyObject *
read_slot(PyObject *obj, PyObject *type, Py_ssize_t offset, PyObject *name)
{
    if (offset >= 0 && (PyObject *)Py_TYPE(obj) == type) {
        PyObject *value = *(PyObject **)((char *)obj + offset);
        if (value != NULL)
            return Py_NewRef(value);
    }
    return PyObject_GetAttr(obj, name);
}

/* setup_ufunc(traced_type, ndarray, ndarray.view, vars(session), vars(replay), UFUNC_ROWS, replay.UFUNC,
 * replay.NO_TEMPLATE, the one-operand marker, _ufunc_tail, the Python hook, replay.constant_part, Provenance, replay.Template,
 * array._derived (TracedArray.__array_finalize__'s rest), session.written_version) */
static PyObject *
setup_ufunc(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 16) {
        PyErr_SetString(PyExc_TypeError, "setup_ufunc takes 16 arguments");
        return NULL;
    }
    if (!PyType_Check(args[0]) || !PyType_Check(args[1]) || !PyType_Check(args[12]) || !PyType_Check(args[13]) || !PyDict_Check(args[3]) || !PyDict_Check(args[4]) ||
        !PyDict_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "setup_ufunc(type, type, view, dict, dict, dict, ...)");
        return NULL;
    }
    PyObject **slots[16] = {&traced_type,  &ndarray_type, &view_fn,     &session_dict, &replay_dict,
                            &ufunc_rows,   &ufunc_marker, &no_template, &one_operand,  &tail_fn,
                            &python_hook,  &constant_part_fn, &provenance_type, &template_type, &derived_fn,
                            &version_fn};
    for (int i = 0; i < 16; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    lp_offset = slot_offset(traced_type, "_lp");
    builder_offset = slot_offset(provenance_type, "builder");
    node_offset = slot_offset(provenance_type, "_node");
    plain_offset = slot_offset(provenance_type, "plain");
    aliases_offset = slot_offset(template_type, "aliases");
    wraps_offset = slot_offset(template_type, "wraps");
    direct_offset = slot_offset(template_type, "direct");
    version_offset = slot_offset(provenance_type, "version");
    lost_offset = slot_offset(provenance_type, "lost");
    line_offset = slot_offset(provenance_type, "line");
    fingerprint_offset = slot_offset(provenance_type, "fingerprint");
    Py_RETURN_NONE;
}

/* One operand's plain value, provenance (None unless traced), kind and part of the replay key, as the Python head
 * reads them (new references). 0: read; 1: not an operand the hot path takes; -1: an error. */
static int
read_operand(PyObject *sess, PyObject *x, PyObject **plain, PyObject **prov, PyObject **kind, PyObject **part)
{
    PyTypeObject *type = Py_TYPE(x);
    if ((PyObject *)type == traced_type) {
        PyObject *lp = read_slot(x, traced_type, lp_offset, s_lp);
        if (lp == NULL)
            return -1;
        PyObject *p = NULL;
        if (lp != Py_None) {
            p = read_slot(lp, provenance_type, plain_offset, s_plain);
            if (p == NULL) {
                Py_DECREF(lp);
                return -1;
            }
            if (p == Py_None)
                Py_CLEAR(p);
        }
        if (p == NULL) {
            PyObject *view_args[2] = {x, ndarray_type};
            p = PyObject_Vectorcall(view_fn, view_args, 2, NULL);
            if (p == NULL) {
                Py_DECREF(lp);
                return -1;
            }
        }
        PyObject *dtype = PyObject_GetAttr(p, s_dtype);
        PyObject *shape = dtype != NULL ? PyObject_GetAttr(p, s_shape) : NULL;
        if (shape == NULL) {
            Py_XDECREF(dtype);
            Py_DECREF(p);
            Py_DECREF(lp);
            return -1;
        }
        *plain = p, *prov = lp, *kind = dtype, *part = shape;
        return 0;
    }
    if (type == &PyFloat_Type || type == &PyLong_Type || type == &PyBool_Type) {
        *plain = Py_NewRef(x), *prov = Py_NewRef(Py_None), *kind = Py_NewRef((PyObject *)type);
        if (type == &PyFloat_Type && PyFloat_AS_DOUBLE(x) == 0.0) { /* a zero: (float, its sign) */
            *part = Py_BuildValue("(Od)", (PyObject *)&PyFloat_Type, copysign(1.0, PyFloat_AS_DOUBLE(x)));
            if (*part == NULL) {
                Py_CLEAR(*plain);
                Py_CLEAR(*prov);
                Py_CLEAR(*kind);
                return -1;
            }
        }
        else
            *part = Py_NewRef(x);
        return 0;
    }
    if ((PyObject *)type == ndarray_type) {
        PyObject *call_args[2] = {sess, x};
        PyObject *constant = PyObject_Vectorcall(constant_part_fn, call_args, 2, NULL);
        if (constant == NULL)
            return -1;
        *plain = Py_NewRef(x), *prov = Py_NewRef(Py_None), *kind = constant, *part = Py_NewRef(Py_None);
        return 0;
    }
    return 1;
}

/* sess.<name> (a new reference), read from the session's instance dict `attrs` (its attributes are plain ones), or by
 * getattr where the dict does not hold it. */
static inline PyObject *
session_attr(PyObject *sess, PyObject *attrs, PyObject *name)
{
    PyObject *value = attrs != NULL ? PyDict_GetItemWithError(attrs, name) : NULL;
    if (value != NULL)
        return Py_NewRef(value);
    if (PyErr_Occurred())
        return NULL;
    return PyObject_GetAttr(sess, name);
}

/* sess.suspended += delta */
static int
suspend(PyObject *sess, PyObject *attrs, int delta)
{
    PyObject *count = session_attr(sess, attrs, s_suspended);
    if (count == NULL)
        return -1;
    PyObject *changed;
    if (PyLong_CheckExact(count)) { /* the count as a C long: no arithmetic protocol (small ints are cached) */
        long value = PyLong_AsLong(count);
        changed = value == -1 && PyErr_Occurred() ? NULL : PyLong_FromLong(value + delta);
    }
    else
        changed = delta > 0 ? PyNumber_Add(count, s_one) : PyNumber_Subtract(count, s_one);
    Py_DECREF(count);
    if (changed == NULL)
        return -1;
    int status = attrs != NULL ? PyDict_SetItem(attrs, s_suspended, changed) : PyObject_SetAttr(sess, s_suspended, changed);
    Py_DECREF(changed);
    return status;
}

/* Whether a traced operand is the node's current value, as the Python tail asks (with no write counted in the trace:
 * a trace with one leaves the whole decision to it). 1 yes, 0 no, -1 an error. */
static int
current(PyObject *prov, PyObject *builder)
{
    if (prov == Py_None)
        return 1;
    PyObject *its = read_slot(prov, provenance_type, builder_offset, s_builder);
    if (its == NULL)
        return -1;
    Py_DECREF(its); /* compared by identity only: builder holds it */
    if (its != builder)
        return 0;
    PyObject *node = read_slot(prov, provenance_type, node_offset, s_node_field);
    if (node == NULL)
        return -1;
    Py_DECREF(node);
    return node != Py_None;
}

/* The replay the C hook does itself (NULL with no error set: leave it to the Python tail). */
static PyObject *
replay_directly(PyObject *sess, PyObject *attrs, PyObject *ufunc, Py_ssize_t n, PyObject *params, PyObject *result, PyObject *prov,
                PyObject *prov_a, PyObject *prov_b, PyObject *kind_a, PyObject *part_a, PyObject *kind_b,
                PyObject *part_b)
{
    PyObject *builder = NULL, *row = NULL, *key = NULL, *template = NULL, *site = NULL, *out = NULL, *value;
    int flag;
    if (prov == Py_None || Py_TYPE(result) != (PyTypeObject *)ndarray_type || kind_a == Py_None ||
        (n == 2 && kind_b == Py_None))
        return NULL;
    if ((builder = read_slot(prov, provenance_type, builder_offset, s_builder)) == NULL || builder == Py_None)
        goto done;
    if ((row = PyDict_GetItemWithError(ufunc_rows, ufunc)) == NULL)
        goto done;
    Py_INCREF(row);
    if ((value = PyObject_GetAttr(builder, s_closed)) == NULL)
        goto done;
    flag = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (flag != 0)
        goto done;
    if ((value = PyObject_GetAttr(row, s_leapp)) == NULL)
        goto done;
    flag = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (flag != 1)
        goto done;
    if ((value = PyDict_GetItemWithError(replay_dict, s_enabled)) == NULL || PyObject_IsTrue(value) != 1)
        goto done;
    if ((value = session_attr(sess, attrs, s_versions)) == NULL)
        goto done;
    flag = !PyDict_Check(value) || PyDict_GET_SIZE(value) != 0;
    Py_DECREF(value);
    if (flag)
        goto done;
    if ((flag = current(prov_a, builder)) != 1 || (n == 2 && (flag = current(prov_b, builder)) != 1))
        goto done;
    PyObject *build = PyObject_GetAttr(row, s_build);
    if (build == NULL)
        goto done;
    key = n == 1 ? PyTuple_Pack(5, ufunc_marker, build, ufunc, kind_a, part_a)
                 : PyTuple_Pack(7, ufunc_marker, build, ufunc, kind_a, part_a, kind_b, part_b);
    Py_DECREF(build);
    if (key == NULL)
        goto done;
    PyObject *templates = PyDict_GetItemWithError(replay_dict, s_templates);
    if (templates == NULL || !PyDict_Check(templates))
        goto done;
    template = PyDict_GetItemWithError(templates, key); /* borrowed: held below only when replayed from */
    if (template == NULL || template == no_template) {
        template = NULL;
        goto done;
    }
    Py_INCREF(template);
    if ((value = read_slot(template, template_type, aliases_offset, s_aliases)) == NULL)
        goto done;
    Py_DECREF(value);
    if (value != Py_None)
        goto done;
    if ((value = read_slot(template, template_type, wraps_offset, s_wraps)) == NULL)
        goto done;
    flag = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (flag != 1)
        goto done;
    PyObject *direct = read_slot(template, template_type, direct_offset, s_direct);
    if (direct == NULL)
        goto done;
    if (direct == Py_None) {
        Py_DECREF(direct);
        goto done;
    }
    PyObject *where = session_attr(sess, attrs, s_where_hook);
    if (where != NULL) {
        site = Py_TYPE(where) == &SiteFinderType ? find_site((SiteFinderObject *)where) : PyObject_CallNoArgs(where);
        Py_DECREF(where);
    }
    if (site != NULL) {
        PyObject *call_args[4] = {builder, params, site, result};
        out = PyObject_Vectorcall(direct, call_args, 4, NULL);
    }
    Py_DECREF(direct);
done:
    Py_XDECREF(builder);
    Py_XDECREF(row);
    Py_XDECREF(key);
    Py_XDECREF(template);
    Py_XDECREF(site);
    return out;
}

/* array_ufunc(self, ufunc, method, *inputs, **kwargs): TracedArray.__array_ufunc__ (see above). */
static PyObject *
array_ufunc(PyObject *module, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (set_up() < 0)
        return NULL;
    PyObject *sess = NULL, *attrs = NULL, *value;
    if (nargs < 4 || nargs > 5 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) ||
        !PyUnicode_Check(args[2]) || PyUnicode_Compare(args[2], s_call) != 0)
        goto python;
    if ((sess = PyDict_GetItemWithError(session_dict, s_active)) == NULL) {
        if (PyErr_Occurred())
            return NULL;
        goto python;
    }
    if (sess == Py_None)
        goto python;
    Py_INCREF(sess);
    /* the session's attributes (a Session: plain instance attributes, no slots or properties among those read) */
    attrs = PyObject_GenericGetDict(sess, NULL);
    if (attrs == NULL)
        goto error;
    if (!PyDict_CheckExact(attrs))
        Py_CLEAR(attrs);
    if ((value = session_attr(sess, attrs, s_suspended)) == NULL)
        goto error;
    int flag = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (flag != 0) {
        if (flag < 0)
            goto error;
        goto python;
    }
    if ((value = session_attr(sess, attrs, s_thread)) == NULL)
        goto error;
    unsigned long thread = PyLong_Check(value) ? PyLong_AsUnsignedLong(value) : 0;
    Py_DECREF(value);
    if (thread == (unsigned long)-1 && PyErr_Occurred())
        PyErr_Clear();
    if (thread != PyThread_get_thread_ident())
        goto python;

    Py_ssize_t n = nargs - 3;
    PyObject *ufunc = args[1], *a = args[3];
    PyObject *plain_a = NULL, *prov_a = NULL, *kind_a = NULL, *part_a = NULL;
    PyObject *plain_b = NULL, *prov_b = NULL, *kind_b = NULL, *part_b = NULL;
    PyObject *params = NULL, *result = NULL, *out = NULL, *prov;
    int status = read_operand(sess, a, &plain_a, &prov_a, &kind_a, &part_a);
    if (status == 0 && n == 2)
        status = read_operand(sess, args[4], &plain_b, &prov_b, &kind_b, &part_b);
    if (status != 0)
        goto operands_done;
    prov = prov_a;
    if (n == 2 && prov_b != Py_None) {
        int take = prov == Py_None;
        if (!take) {
            PyObject *its = read_slot(prov, provenance_type, builder_offset, s_builder);
            if (its == NULL) {
                status = -1;
                goto operands_done;
            }
            take = its == Py_None;
            Py_DECREF(its);
        }
        if (take)
            prov = prov_b;
    }
    params = PyDict_New();
    if (params == NULL || PyDict_SetItem(params, s_x0, a) < 0 || (n == 2 && PyDict_SetItem(params, s_x1, args[4]) < 0)
        || suspend(sess, attrs, 1) < 0) {
        status = -1;
        goto operands_done;
    }
    {
        PyObject *call_args[2] = {plain_a, plain_b};
        result = PyObject_Vectorcall(ufunc, call_args, n, NULL);
    }
    if (result == NULL) { /* NumPy's error is the call's (the session's count put back, as a finally does) */
        PyObject *type, *error, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        if (suspend(sess, attrs, -1) < 0)
            PyErr_Clear();
        PyErr_Restore(type, error, traceback);
        status = -1;
        goto operands_done;
    }
    if (suspend(sess, attrs, -1) < 0) {
        status = -1;
        goto operands_done;
    }
    out = replay_directly(sess, attrs, ufunc, n, params, result, prov, prov_a, prov_b, kind_a, part_a,
                          n == 2 ? kind_b : Py_None, n == 2 ? part_b : Py_None);
    if (out == NULL && !PyErr_Occurred()) {
        PyObject *inputs = PyTuple_New(n);
        PyObject *where = inputs != NULL ? session_attr(sess, attrs, s_where) : NULL;
        if (where != NULL) {
            for (Py_ssize_t i = 0; i < n; i++)
                PyTuple_SET_ITEM(inputs, i, Py_NewRef(args[3 + i]));
            PyObject *tail_args[15] = {sess,   ufunc,  inputs,  params, result, plain_a,
                                       n == 2 ? plain_b : one_operand,  prov,   prov_a,
                                       n == 2 ? prov_b : Py_None,       kind_a, part_a,
                                       n == 2 ? kind_b : Py_None,       n == 2 ? part_b : Py_None, where};
            out = PyObject_Vectorcall(tail_fn, tail_args, 15, NULL);
            Py_DECREF(where);
        }
        Py_XDECREF(inputs);
    }
    if (out == NULL)
        status = -1;
operands_done:
    Py_XDECREF(plain_a), Py_XDECREF(prov_a), Py_XDECREF(kind_a), Py_XDECREF(part_a);
    Py_XDECREF(plain_b), Py_XDECREF(prov_b), Py_XDECREF(kind_b), Py_XDECREF(part_b);
    Py_XDECREF(params);
    Py_XDECREF(result);
    if (status == 0) {
        Py_XDECREF(attrs);
        Py_DECREF(sess);
        return out;
    }
    if (status < 0)
        goto error;
python:
    Py_XDECREF(attrs);
    Py_XDECREF(sess);
    return PyObject_Vectorcall(python_hook, args, nargs, kwnames);
error:
    Py_XDECREF(attrs);
    Py_XDECREF(sess);
    return NULL;
}

static PyMethodDef array_ufunc_def = {"array_ufunc", (PyCFunction)(void (*)(void))array_ufunc,
                                      METH_FASTCALL | METH_KEYWORDS,
                                      "TracedArray.__array_ufunc__'s hot path (tracing/array.py is the reference)"};


/* The array_finalize and wrap below, and the ufunc hook, need setup_ufunc first. */
static int
set_up(void)
{
    if (python_hook == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "leapp_notebook.tracing._flush: setup_ufunc was not called");
        return -1;
    }
    return 0;
}

/* obj.<slot at offset> = value (a new reference taken), for an object of exactly the class the offset is of. */
static inline int
set_slot(PyObject *obj, PyObject *type, Py_ssize_t offset, PyObject *name, PyObject *value)
{
    if (offset >= 0 && (PyObject *)Py_TYPE(obj) == type) {
        PyObject **slot = (PyObject **)((char *)obj + offset);
        Py_XSETREF(*slot, Py_NewRef(value));
        return 0;
    }
    return PyObject_SetAttr(obj, name, value);
}

/* array_finalize(self, obj): TracedArray.__array_finalize__ (array.py's is the reference): NumPy calls it for every
 * traced array it makes, most of them a view of a plain array the tracer takes (a replayed call's result), which
 * gets no provenance here. A view of a traced array goes on in array._derived. */
static PyObject *
array_finalize(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "__array_finalize__(self, obj)");
        return NULL;
    }
    if (set_up() < 0 || set_slot(args[0], traced_type, lp_offset, s_lp, Py_None) < 0)
        return NULL;
    if ((PyObject *)Py_TYPE(args[1]) != traced_type)
        Py_RETURN_NONE;
    return PyObject_Vectorcall(derived_fn, args, 2, NULL);
}

/* wrap(builder, node, result): the traced value of `result`, a replayed call's eager ndarray, bound to `node` (a
 * pending one): Session.wrap's first case, which a template that wraps ends with (replay.compile_template). */
static PyObject *
wrap(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "wrap(builder, node, result)");
        return NULL;
    }
    if (set_up() < 0)
        return NULL;
    PyObject *builder = args[0], *node = args[1], *result = args[2];
    PyObject *sess = PyObject_GetAttr(builder, s_session);
    if (sess == NULL)
        return NULL;
    PyObject *versions = PyObject_GetAttr(sess, s_versions);
    PyObject *array_type = versions != NULL ? PyObject_GetAttr(sess, s_array_type) : NULL;
    Py_DECREF(sess);
    PyObject *version = NULL, *traced = NULL, *prov = NULL;
    if (array_type == NULL)
        goto done;
    if (PyDict_Check(versions) && PyDict_GET_SIZE(versions) == 0)
        version = PyLong_FromLong(0);
    else { /* a write counted in this trace: the result's memory owner's count (session.written_version) */
        PyObject *call_args[2] = {versions, result};
        version = PyObject_Vectorcall(version_fn, call_args, 2, NULL);
    }
    if (version == NULL)
        goto done;
    PyObject *view_args[2] = {result, array_type};
    if ((traced = PyObject_Vectorcall(view_fn, view_args, 2, NULL)) == NULL)
        goto done;
    prov = ((PyTypeObject *)provenance_type)->tp_alloc((PyTypeObject *)provenance_type, 0);
    if (prov == NULL || set_slot(prov, provenance_type, builder_offset, s_builder, builder) < 0 ||
        set_slot(prov, provenance_type, node_offset, s_node_field, node) < 0 ||
        set_slot(prov, provenance_type, version_offset, s_version, version) < 0 ||
        set_slot(prov, provenance_type, lost_offset, s_lost, Py_None) < 0 ||
        set_slot(prov, provenance_type, line_offset, s_line, Py_None) < 0 ||
        set_slot(prov, provenance_type, fingerprint_offset, s_fingerprint, Py_None) < 0 ||
        set_slot(prov, provenance_type, plain_offset, s_plain, result) < 0 ||
        set_slot(traced, traced_type, lp_offset, s_lp, prov) < 0)
        Py_CLEAR(traced);
done:
    Py_XDECREF(versions);
    Py_XDECREF(array_type);
    Py_XDECREF(version);
    Py_XDECREF(prov);
    return traced;
}

static PyMethodDef array_finalize_def = {"array_finalize", (PyCFunction)(void (*)(void))array_finalize, METH_FASTCALL,
                                         "TracedArray.__array_finalize__ (tracing/array.py's is the reference)"};

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))setup, METH_FASTCALL,
     "setup(new_node, node_type, init_node, no_kwargs, key, never_bare, numbered_table, numbered, new_record)"},
    {"flush", (PyCFunction)(void (*)(void))flush, METH_FASTCALL,
     "flush(log, graph, used, counts, append): build the fx nodes of the pending records"},
    {"pend", (PyCFunction)(void (*)(void))pend, METH_FASTCALL,
     "pend(log, spec, args, site): a new pending record, appended to log"},
    {"setup_ufunc", (PyCFunction)(void (*)(void))setup_ufunc, METH_FASTCALL,
     "setup_ufunc(traced_type, ndarray, view, session_vars, replay_vars, rows, marker, no_template, one_operand, "
     "tail, python_hook, constant_part, provenance_type, template_type, derived, written_version)"},
    {"wrap", (PyCFunction)(void (*)(void))wrap, METH_FASTCALL,
     "wrap(builder, node, result): the traced value of a replayed call's eager array (Session.wrap's first case)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_flush",
                                        "RecordingGraph.flush's loop in C (see tracing/builder.py).", -1, methods,
                                        NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__flush(void)
{
    if (PyType_Ready(&PendingType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyType_Ready(&SiteFinderType) < 0 ||
        PyModule_AddObjectRef(module, "SiteFinder", (PyObject *)&SiteFinderType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddObjectRef(module, "Pending", (PyObject *)&PendingType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    struct {
        PyObject **slot;
        const char *text;
    } strings[] = {{&s_spec, "spec"},     {&s_args, "args"}, {&s_kwargs, "kwargs"},
                   {&s_site, "site"},     {&s_node, "node"}, {&s_meta, "meta"},
                   {&s_update, "_update_args_kwargs"}, {&s_name_for, "_name_for"},
                   {&s_active, "ACTIVE"}, {&s_suspended, "suspended"}, {&s_thread, "thread"}, {&s_lp, "_lp"},
                   {&s_plain, "plain"}, {&s_dtype, "dtype"}, {&s_shape, "shape"}, {&s_builder, "builder"},
                   {&s_closed, "closed"}, {&s_leapp, "leapp"}, {&s_enabled, "ENABLED"}, {&s_versions, "versions"},
                   {&s_build, "build"}, {&s_templates, "TEMPLATES"}, {&s_aliases, "aliases"}, {&s_wraps, "wraps"},
                   {&s_direct, "direct"}, {&s_where, "where"}, {&s_where_hook, "where_hook"},
                   {&s_call, "__call__"}, {&s_x0, "x0"}, {&s_x1, "x1"}, {&s_node_field, "_node"}, {&s_f_trace, "f_trace"},
                   {&s_session, "session"}, {&s_array_type, "array_type"}, {&s_version, "version"},
                   {&s_lost, "lost"}, {&s_line, "line"}, {&s_fingerprint, "fingerprint"}};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        *strings[i].slot = PyUnicode_InternFromString(strings[i].text);
        if (*strings[i].slot == NULL) {
            Py_DECREF(module);
            return NULL;
        }
    }
    s_one = PyLong_FromLong(1);
    PyObject *function = s_one != NULL ? PyCFunction_NewEx(&array_ufunc_def, NULL, module) : NULL;
    /* an instance method: bound like a Python function where looked up on an instance, itself on the class (NumPy
     * looks __array_ufunc__ up on the type and passes the array first) */
    PyObject *method = function != NULL ? PyInstanceMethod_New(function) : NULL;
    Py_XDECREF(function);
    if (method == NULL || PyModule_AddObject(module, "array_ufunc", method) < 0) {
        Py_XDECREF(method);
        Py_DECREF(module);
        return NULL;
    }
    function = PyCFunction_NewEx(&array_finalize_def, NULL, module);
    method = function != NULL ? PyInstanceMethod_New(function) : NULL;
    Py_XDECREF(function);
    if (method == NULL || PyModule_AddObject(module, "array_finalize", method) < 0) {
        Py_XDECREF(method);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
