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

static PyMethodDef methods[] = {
    {"setup", (PyCFunction)(void (*)(void))setup, METH_FASTCALL,
     "setup(new_node, node_type, init_node, no_kwargs, key, never_bare, numbered_table, numbered, new_record)"},
    {"flush", (PyCFunction)(void (*)(void))flush, METH_FASTCALL,
     "flush(log, graph, used, counts, append): build the fx nodes of the pending records"},
    {"pend", (PyCFunction)(void (*)(void))pend, METH_FASTCALL,
     "pend(log, spec, args, site): a new pending record, appended to log"},
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
    if (PyModule_AddObjectRef(module, "Pending", (PyObject *)&PendingType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    struct {
        PyObject **slot;
        const char *text;
    } strings[] = {{&s_spec, "spec"},     {&s_args, "args"}, {&s_kwargs, "kwargs"},
                   {&s_site, "site"},     {&s_node, "node"}, {&s_meta, "meta"},
                   {&s_update, "_update_args_kwargs"}, {&s_name_for, "_name_for"}};
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
        *strings[i].slot = PyUnicode_InternFromString(strings[i].text);
        if (*strings[i].slot == NULL) {
            Py_DECREF(module);
            return NULL;
        }
    }
    return module;
}
