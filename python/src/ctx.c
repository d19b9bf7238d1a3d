/* SPDX-License-Identifier: MIT */
/*
 * ctx.c - tokens, requests, epochs, launch brackets and adoption.
 *
 * The current lineage context of Python code is a context variable holding a Token, so
 * that an asyncio task inherits it and a context copied into an executor carries it.
 * request() and epoch() set it and open no C scope: a coroutine may await inside them.
 * The C runtime keeps its own per-thread context; a launch bracket (and every call that
 * reads the thread's context, like a graph capture) first makes the thread's C context
 * the variable's (one lin_token_adopt, unless it already is) and closes that scope again
 * when the bracket ends. adopt() holds a C scope for its whole block, so C code called
 * inside it (a framework's own lin_launch_begin) sees the context too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

static LinRuntime *runtime_of(PyObject *self, lin_runtime **rt)
{
	LinRuntime *r = (LinRuntime *)self;
	*rt = lin_py_rt(r);
	return *rt ? r : NULL;
}

/* An id argument: an int, or an object with an int `id` attribute (Request, Epoch, Token). */
static int as_id(PyObject *o, uint64_t *id)
{
	PyObject *v = PyLong_Check(o) ? Py_NewRef(o) : PyObject_GetAttrString(o, "id");
	if (!v)
		return -1;
	*id = PyLong_AsUnsignedLongLong(v);
	Py_DECREF(v);
	if (*id == (uint64_t)-1 && PyErr_Occurred())
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ Token */

PyObject *lin_py_token_new(const lin_token *tok, PyObject *runtime)
{
	LinToken *t = PyObject_New(LinToken, &LinToken_Type);
	if (!t)
		return NULL;
	t->tok = *tok;
	t->runtime = Py_NewRef(runtime ? runtime : Py_None);
	return (PyObject *)t;
}

static void token_dealloc(LinToken *self)
{
	Py_XDECREF(self->runtime);
	PyObject_Free(self);
}

static PyObject *token_str(LinToken *self)
{
	char buf[LIN_TOKEN_TEXT_MAX];
	int err = lin_token_format(&self->tok, buf, sizeof(buf));
	if (err)
		return lin_py_raise(err, "token_format");
	return PyUnicode_FromString(buf);
}

static PyObject *token_repr(LinToken *self)
{
	return PyUnicode_FromFormat("<lineage.Token %s %llu v%u>",
				    self->tok.kind == LIN_TARGET_EPOCH ? "epoch" : "request",
				    (unsigned long long)self->tok.id, self->tok.version);
}

int lin_py_token_parse_text(PyObject *text, lin_token *tok)
{
	Py_ssize_t len = 0;
	const char *s = PyUnicode_AsUTF8AndSize(text, &len);
	if (!s && !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
		return -ENOMEM; /* out of memory: the exception stays set */
	PyErr_Clear();
	/* Text that cannot be encoded (a lone surrogate, as from a header decoded with
	 * surrogateescape) or with a NUL inside is damaged text (syntax), not a token. */
	return !s || strlen(s) != (size_t)len ? -EINVAL : lin_token_parse(s, tok);
}

static PyObject *token_parse(PyObject *cls, PyObject *text)
{
	(void)cls;
	if (!PyUnicode_Check(text)) {
		PyErr_SetString(PyExc_TypeError, "Token.parse takes a str");
		return NULL;
	}
	lin_token tok;
	int err = lin_py_token_parse_text(text, &tok);
	if (err == -ENOMEM && PyErr_Occurred())
		return NULL;
	if (err)
		return lin_py_raise(err, "token_parse");
	return lin_py_token_new(&tok, NULL);
}

/* Pickles as its text form; the runtime reference is process-local and is not kept. */
static PyObject *token_reduce(LinToken *self, PyObject *unused)
{
	(void)unused;
	PyObject *text = token_str(self);
	if (!text)
		return NULL;
	PyObject *parse = PyObject_GetAttrString((PyObject *)&LinToken_Type, "parse");
	PyObject *r = parse ? Py_BuildValue("(O(O))", parse, text) : NULL;
	Py_XDECREF(parse);
	Py_DECREF(text);
	return r;
}

static PyObject *token_copy(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self); /* immutable */
}

static PyObject *token_richcompare(PyObject *a, PyObject *b, int op)
{
	if (!PyObject_TypeCheck(b, &LinToken_Type) || (op != Py_EQ && op != Py_NE))
		Py_RETURN_NOTIMPLEMENTED;
	const lin_token *x = &((LinToken *)a)->tok, *y = &((LinToken *)b)->tok;
	/* Equal when they name the same thing: text and in-process forms of one token. */
	int eq = x->id == y->id && x->version == y->version && x->kind == y->kind &&
		 x->rt == y->rt && x->slot == y->slot;
	return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t token_hash(LinToken *self)
{
	Py_hash_t h = (Py_hash_t)(self->tok.id * 0x9e3779b97f4a7c15ull ^ self->tok.version);
	return h == -1 ? -2 : h;
}

static PyObject *token_get_id(LinToken *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->tok.id);
}

static PyObject *token_get_version(LinToken *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLong(self->tok.version);
}

static PyObject *token_get_kind(LinToken *self, void *c)
{
	(void)c;
	return PyUnicode_FromString(self->tok.kind == LIN_TARGET_EPOCH ? "epoch" : "request");
}

static PyObject *token_get_runtime(LinToken *self, void *c)
{
	(void)c;
	return Py_NewRef(self->runtime);
}

static PyMethodDef token_methods[] = {
	{ "parse", token_parse, METH_O | METH_CLASS,
	  "Token.parse(text) -> Token: the text form back (syntax and integrity tag checked; "
	  "liveness is checked at adopt). Any thread." },
	{ "__reduce__", (PyCFunction)token_reduce, METH_NOARGS, NULL },
	{ "__copy__", token_copy, METH_NOARGS, NULL },
	{ "__deepcopy__", token_copy, METH_O, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef token_getset[] = {
	{ "id", (getter)token_get_id, NULL, "the request or epoch id", NULL },
	{ "version", (getter)token_get_version, NULL, "the epoch version it was made for", NULL },
	{ "kind", (getter)token_get_kind, NULL, "'request' or 'epoch'", NULL },
	{ "runtime", (getter)token_get_runtime, NULL,
	  "the Runtime that made it, or None (parsed or unpickled)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinToken_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.Token",
	.tp_basicsize = sizeof(LinToken),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A captured lineage context: immutable, 32 bytes of C, str() is its text form "
		  "(for message queues and RPC headers), pickles as that text.",
	.tp_dealloc = (destructor)token_dealloc,
	.tp_repr = (reprfunc)token_repr,
	.tp_str = (reprfunc)token_str,
	.tp_hash = (hashfunc)token_hash,
	.tp_richcompare = token_richcompare,
	.tp_methods = token_methods,
	.tp_getset = token_getset,
};

/* ------------------------------------------------------------------ thread context */

int lin_py_thread_enter(lin_runtime *rt, lin_scope *scope, int *opened)
{
	*opened = 0;
	PyObject *cur = lin_py_current_token();
	if (!cur)
		return -ENOMEM; /* exception set */
	if (cur == Py_None)
		return -LIN_ENOCONTEXT;
	const lin_token *tok = &((LinToken *)cur)->tok;
	uint32_t kind, version;
	uint64_t id;
	/* Already current on this thread (inside adopt(), or a bracket around a bracket). */
	if (lin_scope_current(rt, &kind, &id, &version) == 0 && id == tok->id &&
	    version == tok->version && kind == tok->kind)
		return 0;
	int err = lin_token_adopt(rt, tok, scope);
	if (!err)
		*opened = 1;
	return err;
}

int lin_py_thread_leave(lin_runtime *rt, lin_scope *scope, int opened)
{
	return opened ? lin_scope_exit(rt, scope) : 0;
}

/* ------------------------------------------------------------------ Request / Epoch */

/* A with-block that makes a request or an epoch current (the context variable only). */
typedef struct {
	PyObject_HEAD PyObject *runtime;
	uint64_t id;
	PyObject *token; /* Token for id */
	PyObject *reset; /* contextvars.Token while entered */
	int ended;       /* request ended / epoch retired */
	int null;        /* lineage could not make it: the block runs with the context unchanged */
} LinEntity;

static void entity_dealloc(LinEntity *self)
{
	Py_XDECREF(self->runtime);
	Py_XDECREF(self->token);
	Py_XDECREF(self->reset);
	PyObject_Free(self);
}

static PyObject *entity_new(PyTypeObject *type, PyObject *runtime, uint64_t id)
{
	lin_runtime *rt = ((LinRuntime *)runtime)->rt;
	lin_token tok;
	int err = lin_token_make(rt, id, &tok);
	if (err)
		return lin_py_raise(err, "token_for");
	LinEntity *e = PyObject_New(LinEntity, type);
	if (!e)
		return NULL;
	e->runtime = Py_NewRef(runtime);
	e->id = id;
	e->reset = NULL;
	e->ended = 0;
	e->null = 0;
	e->token = lin_py_token_new(&tok, runtime);
	if (!e->token) {
		Py_DECREF(e);
		return NULL;
	}
	return (PyObject *)e;
}

/* The block a non-strict runtime gives when lineage could not declare it (a closed runtime,
 * no request for an epoch): id 0, token None; entering changes nothing, exiting ends nothing.
 * NULL with an exception only when the absorbed error is not a lineage one. */
static PyObject *entity_null(PyTypeObject *type, PyObject *runtime)
{
	if (!lin_py_absorb(runtime))
		return NULL;
	LinEntity *e = PyObject_New(LinEntity, type);
	if (!e)
		return NULL;
	e->runtime = Py_NewRef(runtime);
	e->id = 0;
	e->reset = NULL;
	e->ended = 0;
	e->null = 1;
	e->token = Py_NewRef(Py_None);
	return (PyObject *)e;
}

static PyObject *entity_enter(LinEntity *self, PyObject *unused)
{
	(void)unused;
	if (self->null)
		return Py_NewRef(self);
	if (!lin_py_rt((LinRuntime *)self->runtime) && !lin_py_absorb(self->runtime))
		return NULL;
	if (self->reset || self->ended)
		return lin_py_raise(-EINVAL, "a request/epoch block cannot be entered twice");
	self->reset = PyContextVar_Set(lin_py_ctxvar, self->token);
	return self->reset ? Py_NewRef(self) : NULL;
}

int lin_py_ctxvar_reset(PyObject *runtime, PyObject *reset)
{
	if (PyContextVar_Reset(lin_py_ctxvar, reset) == 0)
		return 0;
	int strict = runtime ? ((LinRuntime *)runtime)->strict : 0;
	if (!runtime) {
		const char *e = getenv("LINEAGE_STRICT");
		strict = e && !strcmp(e, "1");
	}
	if (strict || !PyErr_ExceptionMatches(PyExc_ValueError))
		return -1;
	/* Left in another Context than the one it began in: that Context's value is not ours
	 * to reset; this one's still holds the block's token, so it gets the value from
	 * before the block. */
	PyErr_Clear();
	PyObject *old = PyObject_GetAttrString(reset, "old_value");
	PyObject *missing = old ? PyObject_GetAttrString((PyObject *)Py_TYPE(reset), "MISSING") : NULL;
	PyObject *t = missing ? PyContextVar_Set(lin_py_ctxvar, old == missing ? Py_None : old) : NULL;
	Py_XDECREF(old);
	Py_XDECREF(missing);
	if (!t)
		return -1;
	Py_DECREF(t);
	if (runtime)
		((LinRuntime *)runtime)->absorbed++;
	return 0;
}

/* End: restore the variable, then end the request or retire the epoch; a lineage error is
 * absorbed outside a strict runtime (the block has run). */
static PyObject *entity_exit_impl(LinEntity *self)
{
	if (!self->reset)
		return lin_py_raise(-EINVAL, "__exit__ without __enter__");
	PyObject *reset = self->reset;
	self->reset = NULL;
	/* The reset fails under a strict runtime when the block ends in another Context than
	 * it began in (an asyncio misuse): the request is still ended, then the error raised. */
	int r = lin_py_ctxvar_reset(self->runtime, reset);
	Py_DECREF(reset);
	lin_runtime *rt = ((LinRuntime *)self->runtime)->rt;
	if (r < 0 || !rt) {
		if (rt && !self->ended) {
			self->ended = 1;
			(void)(Py_IS_TYPE(self, &LinEpoch_Type) ? lin_epoch_retire(rt, self->id)
								: lin_request_end(rt, self->id));
		}
		return r < 0 ? NULL : lin_py_raise(-EINVAL, "the runtime is closed");
	}
	if (!self->ended) {
		self->ended = 1;
		int err = Py_IS_TYPE(self, &LinEpoch_Type) ? lin_epoch_retire(rt, self->id)
							   : lin_request_end(rt, self->id);
		if (err)
			return lin_py_raise(err, Py_IS_TYPE(self, &LinEpoch_Type) ? "epoch_retire"
										  : "request_end");
	}
	Py_RETURN_FALSE;
}

static PyObject *entity_exit(LinEntity *self, PyObject *args)
{
	(void)args;
	if (self->null)
		Py_RETURN_FALSE;
	PyObject *r = entity_exit_impl(self);
	if (r || !lin_py_absorb(self->runtime))
		return r;
	Py_RETURN_FALSE;
}

static PyObject *epoch_reissue_impl(LinEntity *self, unsigned int reason)
{
	lin_runtime *rt = lin_py_rt((LinRuntime *)self->runtime);
	if (!rt)
		return NULL;
	uint32_t version;
	int err = lin_epoch_reissue(rt, self->id, reason, &version);
	if (err)
		return lin_py_raise(err, "epoch_reissue");
	/* The block's token follows the new version; the variable too while inside. */
	lin_token tok;
	err = lin_token_make(rt, self->id, &tok);
	if (err)
		return lin_py_raise(err, "token_for");
	PyObject *t = lin_py_token_new(&tok, self->runtime);
	if (!t)
		return NULL;
	Py_SETREF(self->token, t);
	if (self->reset) {
		PyObject *r = PyContextVar_Set(lin_py_ctxvar, t);
		if (!r)
			return NULL;
		Py_DECREF(r); /* exit still resets to what was before the block */
	}
	return PyLong_FromUnsignedLong(version);
}

/* The retry path of the user's code: outside a strict runtime a lineage error (an epoch
 * lineage could not declare, id 0; one retired; a closed runtime) is absorbed and None
 * returned, the retry runs all the same. */
static PyObject *epoch_reissue(LinEntity *self, PyObject *args)
{
	unsigned int reason = LIN_REISSUE_RETRY;
	if (!PyArg_ParseTuple(args, "|I", &reason))
		return NULL;
	PyObject *r = epoch_reissue_impl(self, reason);
	if (r || !lin_py_absorb(self->runtime))
		return r;
	Py_RETURN_NONE;
}

static PyObject *entity_get_id(LinEntity *self, void *c)
{
	(void)c;
	return PyLong_FromUnsignedLongLong(self->id);
}

static PyObject *entity_get_token(LinEntity *self, void *c)
{
	(void)c;
	return Py_NewRef(self->token);
}

static PyMethodDef request_methods[] = {
	{ "__enter__", (PyCFunction)entity_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)entity_exit, METH_VARARGS, NULL },
	{ NULL, NULL, 0, NULL },
};

static PyMethodDef epoch_methods[] = {
	{ "__enter__", (PyCFunction)entity_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)entity_exit, METH_VARARGS, NULL },
	{ "reissue", (PyCFunction)epoch_reissue, METH_VARARGS,
	  "reissue(reason=REISSUE_RETRY) -> version: the launch is issued again; tokens made "
	  "before become stale. Any thread. Outside a strict runtime, where lineage cannot "
	  "(an epoch it could not declare, id 0; one retired; a closed runtime) it returns None "
	  "and counts stats()['absorbed']." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef entity_getset[] = {
	{ "id", (getter)entity_get_id, NULL, "the id", NULL },
	{ "token", (getter)entity_get_token, NULL, "a Token for it", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject LinRequest_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.Request",
	.tp_basicsize = sizeof(LinEntity),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A request block: current inside (context variable), ended at exit.",
	.tp_dealloc = (destructor)entity_dealloc,
	.tp_methods = request_methods,
	.tp_getset = entity_getset,
};

PyTypeObject LinEpoch_Type = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lineage.Epoch",
	.tp_basicsize = sizeof(LinEntity),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An epoch block: current inside (context variable), retired at exit.",
	.tp_dealloc = (destructor)entity_dealloc,
	.tp_methods = epoch_methods,
	.tp_getset = entity_getset,
};

static int request_opts(PyObject *args, PyObject *kw, struct lin_request_opts *o,
			const struct lin_w3c_context **remote)
{
	static char *kwlist[] = { "name", "user_id", "parent", "remote", NULL };
	PyObject *uid = Py_None, *parent = Py_None, *rem = Py_None;
	const char *name = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|z$OOO", kwlist, &name, &uid, &parent, &rem))
		return -1;
	o->sz = sizeof(*o);
	o->name = name;
	if (uid != Py_None) {
		o->user_id = PyLong_AsUnsignedLongLong(uid);
		if (o->user_id == (uint64_t)-1 && PyErr_Occurred())
			return -1;
		o->has_user_id = 1;
	}
	if (parent != Py_None && as_id(parent, &o->parent) < 0)
		return -1;
	*remote = NULL;
	if (rem != Py_None) {
		if (!PyObject_TypeCheck(rem, &LinRemote_Type)) {
			PyErr_SetString(PyExc_TypeError, "remote must be a lineage.RemoteContext");
			return -1;
		}
		*remote = &((LinRemote *)rem)->ctx;
	}
	o->remote = *remote;
	return 0;
}

static int request_begin(PyObject *self, PyObject *args, PyObject *kw, uint64_t *id)
{
	lin_runtime *rt;
	if (!runtime_of(self, &rt))
		return -1;
	struct lin_request_opts o = { 0 };
	const struct lin_w3c_context *remote;
	if (request_opts(args, kw, &o, &remote) < 0)
		return -1;
	int err = lin_request_begin(rt, &o, id);
	return err ? lin_py_raise_int(err, "request_begin") : 0;
}

PyObject *lin_py_rt_request(PyObject *self, PyObject *args, PyObject *kw)
{
	uint64_t id;
	if (request_begin(self, args, kw, &id) < 0)
		return entity_null(&LinRequest_Type, self);
	PyObject *r = entity_new(&LinRequest_Type, self, id);
	if (!r)
		lin_request_end(((LinRuntime *)self)->rt, id);
	return r;
}

PyObject *lin_py_rt_request_begin(PyObject *self, PyObject *args, PyObject *kw)
{
	uint64_t id;
	return request_begin(self, args, kw, &id) < 0 ? NULL : PyLong_FromUnsignedLongLong(id);
}

/* Epoch requests: the ones given, or the current context's (a request; or an epoch, which
 * then becomes the parent and gives its requests). When the current context is the
 * thread's C scope (inside an adopt block, or a worker of lineage.futures), none are
 * given: lin_epoch_declare takes that scope's, a late one's too (a worker that adopted a
 * request after it ended declares its epoch for that request, whose GPU work then joins
 * it; naming the ended request here would be refused as not live). */
#define EPOCH_MAX_REQ 4096
static int epoch_from_context(lin_runtime *rt, struct lin_epoch_opts *o, uint64_t *req)
{
	PyObject *cur = lin_py_current_token();
	if (!cur)
		return -1;
	if (cur == Py_None)
		return lin_py_raise_int(-LIN_ENOCONTEXT, "epoch: no requests given and none current");
	const lin_token *t = &((LinToken *)cur)->tok;
	uint32_t kind, version;
	uint64_t id;
	if (lin_scope_current(rt, &kind, &id, &version) == 0 && id == t->id &&
	    version == t->version && kind == t->kind) {
		o->n_requests = 0; /* the C default: the current scope's requests */
		return 0;
	}
	if (t->kind == LIN_TARGET_REQUEST) {
		req[0] = t->id;
		o->n_requests = 1;
		return 0;
	}
	struct lin_entity_info info = { .sz = sizeof(info) };
	int err = lin_entity_lookup(rt, t->id, &info, req, EPOCH_MAX_REQ);
	if (err)
		return lin_py_raise_int(err, "epoch: the current epoch");
	if (info.n_requests > EPOCH_MAX_REQ)
		return lin_py_raise_int(-EINVAL, "epoch: the current epoch serves too many requests");
	if (!o->parent)
		o->parent = t->id;
	o->n_requests = info.n_requests;
	if (!info.n_requests)
		o->flags |= LIN_EPOCH_NO_REQUESTS;
	return 0;
}

/* shares=: a sequence of (tokens, flags) pairs, one per request given. A share that does
 * not hold raises InvalidArgument (lin_epoch_declare's rule: a known flag, not prefill and
 * decode at once); the caller absorbs it unless strict. */
/* Clear the pending exception when it says the argument is wrong (TypeError, ValueError,
 * OverflowError), so that lineage's own InvalidArgument replaces it; keep any other
 * (KeyboardInterrupt, SystemExit, MemoryError: the program's, never absorbed). */
static bool arg_error(void)
{
	if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError) &&
	    !PyErr_ExceptionMatches(PyExc_OverflowError))
		return false;
	PyErr_Clear();
	return true;
}

static int parse_shares(PyObject *seq, Py_ssize_t n, struct lin_epoch_share *out)
{
	char msg[200];
	PyObject *fast = PySequence_Fast(seq, "epoch: shares must be a sequence");
	if (!fast) {
		if (!arg_error()) /* KeyboardInterrupt, MemoryError...: the program's */
			return -1;
		return lin_py_raise_int(-EINVAL, "epoch: shares must be a sequence of (tokens, flags)");
	}
	int ret = -1;
	if (PySequence_Fast_GET_SIZE(fast) != n) {
		snprintf(msg, sizeof(msg), "epoch: %zd shares for %zd requests (one per request given)",
			 PySequence_Fast_GET_SIZE(fast), n);
		lin_py_raise_int(-EINVAL, msg);
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		unsigned long long tokens = 0, flags = 0;
		PyObject *it = PySequence_Fast_GET_ITEM(fast, i);
		bool ok = PyTuple_Check(it) && PyTuple_GET_SIZE(it) == 2 &&
			  PyLong_Check(PyTuple_GET_ITEM(it, 0)) &&
			  PyLong_Check(PyTuple_GET_ITEM(it, 1));
		if (ok) {
			tokens = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(it, 0));
			flags = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(it, 1));
			if (PyErr_Occurred()) { /* negative or too large */
				if (!arg_error())
					goto out;
				ok = false;
			}
		}
		if (ok && (tokens > UINT32_MAX || (flags & ~(unsigned long long)LIN_SHARE_FLAGS_ALL) ||
			   ((flags & LIN_SHARE_PREFILL) && (flags & LIN_SHARE_DECODE)) ||
			   ((flags & LIN_SHARE_DECODE) && (flags & LIN_SHARE_FIRST_TOKEN))))
			ok = false;
		if (!ok) {
			snprintf(msg, sizeof(msg),
				 "epoch: share %zd is not (tokens, flags): tokens 0..2^32-1, flags "
				 "SHARE_PREFILL or SHARE_DECODE (not both), SHARE_FIRST_TOKEN (not with "
				 "decode)",
				 i);
			lin_py_raise_int(-EINVAL, msg);
			goto out;
		}
		out[i].tokens = (uint32_t)tokens;
		out[i].flags = (uint32_t)flags;
	}
	ret = 0;
out:
	Py_DECREF(fast);
	return ret;
}

static int epoch_declare(PyObject *self, PyObject *args, PyObject *kw, uint64_t *id)
{
	static char *kwlist[] = { "name", "parent", "no_requests", "shares", NULL };
	lin_runtime *rt;
	if (!runtime_of(self, &rt))
		return -1;
	const char *name = NULL;
	PyObject *parent = Py_None, *shares = Py_None;
	int none = 0;
	PyObject *empty = PyTuple_New(0);
	int ok = empty && PyArg_ParseTupleAndKeywords(empty, kw, "|$zOpO", kwlist, &name, &parent,
						      &none, &shares);
	Py_XDECREF(empty);
	if (!ok)
		return -1;
	Py_ssize_t n = PyTuple_GET_SIZE(args);
	if (n > EPOCH_MAX_REQ)
		return lin_py_raise_int(-EINVAL, "epoch: too many requests");
	uint64_t *req = PyMem_Malloc(EPOCH_MAX_REQ * sizeof(*req));
	struct lin_epoch_share *sh = shares != Py_None ? PyMem_Malloc((size_t)n * sizeof(*sh)) : NULL;
	if (!req || (shares != Py_None && !sh)) {
		PyMem_Free(req);
		PyMem_Free(sh);
		PyErr_NoMemory();
		return -1;
	}
	struct lin_epoch_opts o = { .sz = sizeof(o),
				    .name = name,
				    .requests = req,
				    .n_requests = (size_t)n,
				    .flags = none ? LIN_EPOCH_NO_REQUESTS : 0,
				    .shares = sh };
	int ret = -1;
	if (parent != Py_None && as_id(parent, &o.parent) < 0)
		goto out;
	for (Py_ssize_t i = 0; i < n; i++)
		if (as_id(PyTuple_GET_ITEM(args, i), &req[i]) < 0)
			goto out;
	/* Shares that do not hold refuse the measurement, not the epoch: a lenient runtime
	 * declares it without them (stats()["absorbed"]). */
	if (sh && ((!n && lin_py_raise_int(-EINVAL, "epoch: shares need the requests they "
						    "belong to (given, not from the context)")) ||
		   (n && parse_shares(shares, n, sh) < 0))) {
		if (!lin_py_absorb(self))
			goto out;
		o.shares = NULL;
	}
	if (!n && !none && epoch_from_context(rt, &o, req) < 0)
		goto out;
	if (!o.n_requests)
		o.requests = NULL;
	int err = lin_epoch_declare(rt, &o, id);
	ret = err ? lin_py_raise_int(err, "epoch_declare") : 0;
out:
	PyMem_Free(req);
	PyMem_Free(sh);
	return ret;
}

PyObject *lin_py_rt_epoch(PyObject *self, PyObject *args, PyObject *kw)
{
	uint64_t id;
	if (epoch_declare(self, args, kw, &id) < 0)
		return entity_null(&LinEpoch_Type, self);
	PyObject *e = entity_new(&LinEpoch_Type, self, id);
	if (!e)
		lin_epoch_retire(((LinRuntime *)self)->rt, id);
	return e;
}

PyObject *lin_py_rt_epoch_declare(PyObject *self, PyObject *args, PyObject *kw)
{
	uint64_t id;
	return epoch_declare(self, args, kw, &id) < 0 ? NULL : PyLong_FromUnsignedLongLong(id);
}

/* The plain calls: an id in, None out; errors raise. */
static PyObject *id_call(PyObject *self, PyObject *id, int (*fn)(lin_runtime *, uint64_t),
			 const char *what)
{
	lin_runtime *rt;
	uint64_t v;
	if (!runtime_of(self, &rt) || as_id(id, &v) < 0)
		return NULL;
	int err = fn(rt, v);
	if (err)
		return lin_py_raise(err, what);
	Py_RETURN_NONE;
}

PyObject *lin_py_rt_request_end(PyObject *self, PyObject *id)
{
	return id_call(self, id, lin_request_end, "request_end");
}

PyObject *lin_py_rt_epoch_retire(PyObject *self, PyObject *id)
{
	return id_call(self, id, lin_epoch_retire, "epoch_retire");
}

PyObject *lin_py_rt_epoch_reissue(PyObject *self, PyObject *args)
{
	lin_runtime *rt;
	PyObject *ido;
	unsigned int reason = LIN_REISSUE_RETRY;
	uint64_t id;
	uint32_t version;
	if (!runtime_of(self, &rt) || !PyArg_ParseTuple(args, "O|I", &ido, &reason) ||
	    as_id(ido, &id) < 0)
		return NULL;
	int err = lin_epoch_reissue(rt, id, reason, &version);
	return err ? lin_py_raise(err, "epoch_reissue") : PyLong_FromUnsignedLong(version);
}

PyObject *lin_py_rt_token_for(PyObject *self, PyObject *ido)
{
	lin_runtime *rt;
	uint64_t id;
	lin_token tok;
	if (!runtime_of(self, &rt) || as_id(ido, &id) < 0)
		return NULL;
	int err = lin_token_make(rt, id, &tok);
	return err ? lin_py_raise(err, "token_for") : lin_py_token_new(&tok, self);
}

PyObject *lin_py_rt_lookup(PyObject *self, PyObject *ido)
{
	lin_runtime *rt;
	uint64_t id, req[64];
	if (!runtime_of(self, &rt) || as_id(ido, &id) < 0)
		return NULL;
	struct lin_entity_info info = { .sz = sizeof(info) };
	int err = lin_entity_lookup(rt, id, &info, req, 64);
	if (err)
		return lin_py_raise(err, "lookup");
	size_t n = info.n_requests < 64 ? info.n_requests : 64;
	PyObject *l = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; l && i < n; i++)
		PyList_SET_ITEM(l, i, PyLong_FromUnsignedLongLong(req[i]));
	if (!l)
		return NULL;
	return Py_BuildValue("{sssIsKsKsN}", "kind", info.kind == LIN_TARGET_EPOCH ? "epoch" : "request",
			     "version", info.version, "parent", info.parent, "n_requests",
			     (unsigned long long)info.n_requests, "requests", l);
}

PyObject *lin_py_rt_current(PyObject *self, PyObject *unused)
{
	(void)unused;
	lin_runtime *rt;
	uint32_t kind, version;
	uint64_t id;
	if (!runtime_of(self, &rt))
		return NULL;
	if (lin_scope_current(rt, &kind, &id, &version))
		Py_RETURN_NONE;
	return Py_BuildValue("(sKI)", kind == LIN_TARGET_EPOCH ? "epoch" : "request", id, version);
}
