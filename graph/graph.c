/* SPDX-License-Identifier: MIT */
/*
 * graph.c - CUDA graph identity (include/lineage/graph.h): node origin, clone map, replay
 * epochs with per-exec ordinals. Records go straight into the trace; the maps only serve
 * lookups and ordinals, are bounded, and forget what destroyed graphs and execs owned.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lineage/graph.h"
#include "opts.h"
#include "rt_internal.h"

#define GL_SCOPE_OPEN 1u

/* A chained hash of 64-bit ids; entries embed struct hent first. */
struct hent {
	uint64_t id;
	struct hent *hnext;
};

struct htab {
	struct hent **b;
	size_t mask;
	size_t n;
};

struct node_ent {
	struct hent h;
	struct node_ent *onext; /* next in its owner's list (graph nodes or exec clones) */
	uint64_t original;      /* 0 for a node the application created */
	uint64_t epoch;
	uint32_t version;
	int has_epoch; /* app nodes, and clones once updated */
};

struct owner_ent { /* a graph (its nodes) or an exec (its clones) */
	struct hent h;
	struct node_ent *nodes;
	uint64_t graph_id; /* execs: the graph instantiated */
	uint64_t ordinal;  /* execs: last replay ordinal */
};

struct lin_graph_tracker {
	lin_runtime *rt;
	pthread_mutex_t mu;
	struct htab nodes, graphs, execs;
	size_t max_nodes, max_execs;
};

static int ht_init(struct htab *t, size_t max)
{
	size_t nb = 64;

	while (nb < max && nb < (1u << 16))
		nb <<= 1;
	t->b = calloc(nb, sizeof(*t->b));
	t->mask = nb - 1;
	t->n = 0;
	return t->b ? 0 : -ENOMEM;
}

static size_t ht_slot(const struct htab *t, uint64_t id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & t->mask;
}

static struct hent *ht_find(const struct htab *t, uint64_t id)
{
	for (struct hent *e = t->b[ht_slot(t, id)]; e; e = e->hnext)
		if (e->id == id)
			return e;
	return NULL;
}

static void ht_insert(struct htab *t, struct hent *e)
{
	size_t s = ht_slot(t, e->id);

	e->hnext = t->b[s];
	t->b[s] = e;
	t->n++;
}

static struct hent *ht_remove(struct htab *t, uint64_t id)
{
	for (struct hent **p = &t->b[ht_slot(t, id)]; *p; p = &(*p)->hnext) {
		struct hent *e = *p;

		if (e->id == id) {
			*p = e->hnext;
			t->n--;
			return e;
		}
	}
	return NULL;
}

/* Free every owner in @t with its nodes (removing them from the node table). */
static void free_owners(struct lin_graph_tracker *gt, struct htab *t)
{
	if (!t->b)
		return;
	for (size_t i = 0; i <= t->mask; i++) {
		while (t->b[i]) {
			struct owner_ent *o = (struct owner_ent *)t->b[i];

			t->b[i] = o->h.hnext;
			for (struct node_ent *n = o->nodes, *next; n; n = next) {
				next = n->onext;
				ht_remove(&gt->nodes, n->h.id);
				free(n);
			}
			free(o);
		}
	}
	free(t->b);
	t->b = NULL;
}

LIN_API int lin_graph_tracker_create(lin_runtime *rt, const struct lin_graph_tracker_opts *opts,
				     lin_graph_tracker **out)
{
	struct lin_graph_tracker *gt;

	struct lin_graph_tracker_opts o;
	if (!rt || !out || lin_opts_copy(&o, sizeof(o), opts))
		return -EINVAL;
	gt = calloc(1, sizeof(*gt));
	if (!gt)
		return -ENOMEM;
	gt->rt = rt;
	gt->max_nodes = 1u << 20;
	gt->max_execs = 1u << 16;
	/* A field the caller's sz ends inside is not read (as before the one options copy). */
	size_t sz = opts ? opts->sz : 0;
	if (sz < offsetof(struct lin_graph_tracker_opts, max_nodes) + sizeof(o.max_nodes))
		o.max_nodes = 0;
	if (sz < offsetof(struct lin_graph_tracker_opts, max_execs) + sizeof(o.max_execs))
		o.max_execs = 0;
	if (o.max_nodes)
		gt->max_nodes = o.max_nodes;
	if (o.max_execs)
		gt->max_execs = o.max_execs;
	if (pthread_mutex_init(&gt->mu, NULL) != 0) {
		free(gt);
		return -ENOMEM;
	}
	if (ht_init(&gt->nodes, gt->max_nodes) || ht_init(&gt->graphs, gt->max_execs) ||
	    ht_init(&gt->execs, gt->max_execs)) {
		lin_graph_tracker_free(gt);
		return -ENOMEM;
	}
	*out = gt;
	return 0;
}

LIN_API void lin_graph_tracker_free(lin_graph_tracker *gt)
{
	if (!gt)
		return;
	free_owners(gt, &gt->graphs);
	free_owners(gt, &gt->execs);
	free(gt->nodes.b);
	pthread_mutex_destroy(&gt->mu);
	free(gt);
}

/* The calling thread's current epoch; 0 when its context is a request or absent. */
static int current_epoch(lin_runtime *rt, uint64_t *epoch, uint32_t *version, uint32_t *kind)
{
	uint32_t k = 0, v = 0;
	uint64_t id = 0;
	int err = lin_scope_current(rt, &k, &id, &v);

	*epoch = 0;
	*version = 0;
	if (kind)
		*kind = err ? 0 : k;
	if (err || k != LIN_TARGET_EPOCH)
		return err ? err : -LIN_ENOCONTEXT;
	*epoch = id;
	*version = v;
	return 0;
}

static struct owner_ent *owner_get(struct htab *t, uint64_t id, size_t max)
{
	struct owner_ent *o = (struct owner_ent *)ht_find(t, id);

	if (o || t->n >= max)
		return o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->h.id = id;
	ht_insert(t, &o->h);
	return o;
}

/* Remember a node under @owner; updates in place if known. Call with gt->mu held. */
static int remember_node(struct lin_graph_tracker *gt, struct htab *owners, uint64_t owner_id,
			 uint64_t node_id, uint64_t original, uint64_t epoch, uint32_t version,
			 int has_epoch)
{
	struct node_ent *n = (struct node_ent *)ht_find(&gt->nodes, node_id);
	struct owner_ent *o;

	if (!n) {
		if (gt->nodes.n >= gt->max_nodes)
			return -ENOSPC;
		o = owner_get(owners, owner_id, owners == &gt->execs ? gt->max_execs : gt->max_nodes);
		if (!o)
			return -ENOSPC;
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->h.id = node_id;
		ht_insert(&gt->nodes, &n->h);
		n->onext = o->nodes;
		o->nodes = n;
	}
	n->original = original;
	n->epoch = epoch;
	n->version = version;
	n->has_epoch = has_epoch;
	return 0;
}

static uint64_t opt(uint64_t v) { return v ? v : LIN_NIL; }

LIN_API int lin_graph_capture_begin(lin_graph_tracker *gt, lin_graph_capture *cap)
{
	if (!gt || !cap)
		return -EINVAL;
	memset(cap, 0, sizeof(*cap));
	cap->tid = lin_rt_gettid();
	cap->host_ns = lin_rt_now_ns(gt->rt);
	return current_epoch(gt->rt, &cap->epoch, &cap->version, NULL);
}

LIN_API int lin_graph_capture_end(lin_graph_tracker *gt, const lin_graph_capture *cap,
				  uint64_t graph_id, const uint64_t *nodes, size_t n)
{
	msgpack_packer *pk;
	int err = 0;

	if (!gt || !cap || !graph_id || (!nodes && n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!nodes[i])
			return -EINVAL;
	pthread_mutex_lock(&gt->mu);
	for (size_t i = 0; i < n; i++) {
		int e = remember_node(gt, &gt->graphs, graph_id, nodes[i], 0, cap->epoch,
				      cap->version, 1);
		if (e && !err)
			err = e;
	}
	pthread_mutex_unlock(&gt->mu);
	pk = lin_rt_out_lock(gt->rt);
	if (!pk)
		return -LIN_ETRACE;
	for (size_t i = 0; i < n; i++)
		lin_tf_graph_node(pk, cap->host_ns, cap->tid, graph_id, nodes[i], opt(cap->epoch),
				  cap->epoch ? cap->version : LIN_NIL, LIN_NODE_ORIGIN_CAPTURE);
	lin_rt_out_unlock(gt->rt);
	return err;
}

LIN_API int lin_graph_node_created(lin_graph_tracker *gt, uint64_t graph_id, uint64_t node_id)
{
	uint64_t epoch;
	uint32_t version;
	msgpack_packer *pk;
	int err;

	if (!gt || !graph_id || !node_id)
		return -EINVAL;
	(void)current_epoch(gt->rt, &epoch, &version, NULL);
	pthread_mutex_lock(&gt->mu);
	err = remember_node(gt, &gt->graphs, graph_id, node_id, 0, epoch, version, 1);
	pthread_mutex_unlock(&gt->mu);
	pk = lin_rt_out_lock(gt->rt);
	if (!pk)
		return -LIN_ETRACE;
	lin_tf_graph_node(pk, lin_rt_now_ns(gt->rt), lin_rt_gettid(), graph_id, node_id, opt(epoch),
			  epoch ? version : LIN_NIL, LIN_NODE_ORIGIN_EXPLICIT);
	lin_rt_out_unlock(gt->rt);
	return err;
}

LIN_API int lin_graph_edges(lin_graph_tracker *gt, uint64_t graph_id, const uint64_t *from,
			    const uint64_t *to, size_t n)
{
	if (!gt || !graph_id || (n && (!from || !to)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!from[i] || !to[i] || from[i] == to[i])
			return -EINVAL;
	msgpack_packer *pk = lin_rt_out_lock(gt->rt);
	if (!pk)
		return -LIN_ETRACE;
	if (!n)
		lin_tf_graph_edge(pk, graph_id, LIN_NIL, LIN_NIL);
	for (size_t i = 0; i < n; i++)
		lin_tf_graph_edge(pk, graph_id, from[i], to[i]);
	lin_rt_out_unlock(gt->rt);
	return 0;
}

LIN_API int lin_graph_exec_instantiated(lin_graph_tracker *gt, uint64_t graph_id, uint64_t exec_id)
{
	struct owner_ent *x;
	msgpack_packer *pk;
	int err = 0;

	if (!gt || !graph_id || !exec_id)
		return -EINVAL;
	pthread_mutex_lock(&gt->mu);
	x = owner_get(&gt->execs, exec_id, gt->max_execs);
	if (x)
		x->graph_id = graph_id;
	else
		err = -ENOSPC;
	pthread_mutex_unlock(&gt->mu);
	pk = lin_rt_out_lock(gt->rt);
	if (!pk)
		return -LIN_ETRACE;
	lin_tf_graph_exec(pk, lin_rt_now_ns(gt->rt), lin_rt_gettid(), graph_id, exec_id);
	lin_rt_out_unlock(gt->rt);
	return err;
}

LIN_API int lin_graph_node_cloned(lin_graph_tracker *gt, uint64_t original, uint64_t clone,
				  uint64_t graph_id, uint64_t exec_id)
{
	msgpack_packer *pk;
	int err;

	if (!gt || !original || !clone || original == clone)
		return -EINVAL;
	pthread_mutex_lock(&gt->mu);
	/* Clones are owned by their exec (id 0: an exec not known yet, freed with the tracker). */
	err = remember_node(gt, &gt->execs, exec_id, clone, original, 0, 0, 0);
	pthread_mutex_unlock(&gt->mu);
	pk = lin_rt_out_lock(gt->rt);
	if (!pk)
		return -LIN_ETRACE;
	lin_tf_graph_node_clone(pk, original, clone, opt(graph_id), opt(exec_id));
	lin_rt_out_unlock(gt->rt);
	return err;
}

LIN_API int lin_graph_node_updated(lin_graph_tracker *gt, uint64_t node_id)
{
	uint64_t epoch;
	uint32_t version;
	struct node_ent *n;
	msgpack_packer *pk;

	if (!gt || !node_id)
		return -EINVAL;
	(void)current_epoch(gt->rt, &epoch, &version, NULL);
	pthread_mutex_lock(&gt->mu);
	n = (struct node_ent *)ht_find(&gt->nodes, node_id);
	if (n) {
		n->epoch = epoch;
		n->version = version;
		n->has_epoch = 1;
	}
	pthread_mutex_unlock(&gt->mu);
	pk = lin_rt_out_lock(gt->rt);
	if (!pk)
		return -LIN_ETRACE;
	lin_tf_graph_node_update(pk, lin_rt_now_ns(gt->rt), lin_rt_gettid(), node_id, opt(epoch),
				 epoch ? version : LIN_NIL);
	lin_rt_out_unlock(gt->rt);
	return 0;
}

static int forget_owner(struct lin_graph_tracker *gt, struct htab *t, uint64_t id)
{
	struct owner_ent *o;

	pthread_mutex_lock(&gt->mu);
	o = (struct owner_ent *)ht_remove(t, id);
	if (o) {
		for (struct node_ent *n = o->nodes, *next; n; n = next) {
			next = n->onext;
			ht_remove(&gt->nodes, n->h.id);
			free(n);
		}
	}
	pthread_mutex_unlock(&gt->mu);
	free(o);
	return o ? 0 : -LIN_ENOTFOUND;
}

LIN_API int lin_graph_exec_destroyed(lin_graph_tracker *gt, uint64_t exec_id)
{
	if (!gt)
		return -EINVAL;
	return forget_owner(gt, &gt->execs, exec_id);
}

LIN_API int lin_graph_destroyed(lin_graph_tracker *gt, uint64_t graph_id)
{
	if (!gt)
		return -EINVAL;
	return forget_owner(gt, &gt->graphs, graph_id);
}

/* A plain launch bracket when no replay epoch could be minted; keeps @err if the bracket
 * itself succeeded. */
static int plain_launch(lin_graph_tracker *gt, const char *name, lin_graph_launch *gl, int err)
{
	int e = lin_launch_begin(gt->rt, name, &gl->launch);

	return err ? err : e;
}

LIN_API int lin_graph_launch_begin(lin_graph_tracker *gt, uint64_t exec_id, const char *name,
				   lin_graph_launch *gl)
{
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .name = name };
	uint64_t epoch, ordinal = 0;
	uint32_t version, kind;
	struct owner_ent *x;
	msgpack_packer *pk;
	int err;

	if (!gt || !gl || !exec_id)
		return -EINVAL;
	memset(gl, 0, sizeof(*gl));
	/* The record's time is read before the late check, as lin_launch_begin reads its own:
	 * a re-issue after it is a re-issue after the launch, one before it is seen late. */
	uint64_t t0 = lin_rt_now_ns(gt->rt);
	err = current_epoch(gt->rt, &epoch, &version, &kind);
	if (err && kind != LIN_TARGET_REQUEST)
		return plain_launch(gt, name, gl, -LIN_ENOCONTEXT);
	/* Late work (its epoch retired or re-issued since it was adopted): no replay epoch is
	 * minted under a version that has ended. A plain bracket pushes the epoch with its late
	 * bit, so the replay's GPU records join that version, counted late. */
	if (!err && lin_rt_scope_late(gt->rt))
		return plain_launch(gt, name, gl, 0);
	pthread_mutex_lock(&gt->mu);
	x = owner_get(&gt->execs, exec_id, gt->max_execs);
	if (x)
		ordinal = ++x->ordinal;
	pthread_mutex_unlock(&gt->mu);
	if (!x)
		return plain_launch(gt, name, gl, -ENOSPC);
	eo.parent = epoch; /* 0 under a request: the replay serves the current request */
	err = lin_epoch_declare(gt->rt, &eo, &gl->replay_epoch);
	if (err)
		return plain_launch(gt, name, gl, err);
	err = lin_scope_enter(gt->rt, gl->replay_epoch, &gl->scope);
	if (err) {
		(void)lin_epoch_retire(gt->rt, gl->replay_epoch);
		gl->replay_epoch = 0;
		return plain_launch(gt, name, gl, err);
	}
	gl->flags |= GL_SCOPE_OPEN;
	gl->ordinal = ordinal;
	pk = lin_rt_out_lock(gt->rt);
	if (pk) {
		lin_tf_graph_launch(pk, t0, lin_rt_gettid(), exec_id, gl->replay_epoch, ordinal,
				    opt(epoch), epoch ? version : LIN_NIL, LIN_NIL);
		lin_rt_out_unlock(gt->rt);
	}
	return lin_launch_begin(gt->rt, name, &gl->launch);
}

LIN_API int lin_graph_launch_end(lin_graph_tracker *gt, lin_graph_launch *gl)
{
	int err, e;

	if (!gt || !gl)
		return -EINVAL;
	err = lin_launch_end(gt->rt, &gl->launch);
	if (gl->flags & GL_SCOPE_OPEN) {
		e = lin_scope_exit(gt->rt, &gl->scope);
		if (!err)
			err = e;
		e = lin_epoch_retire(gt->rt, gl->replay_epoch);
		if (!err)
			err = e;
		gl->flags &= ~GL_SCOPE_OPEN;
	}
	return err;
}

LIN_API int lin_graph_node_origin(lin_graph_tracker *gt, uint64_t node_id, uint64_t *epoch,
				  uint32_t *version)
{
	struct node_ent *n;
	int err = -LIN_ENOTFOUND;

	if (!gt || !node_id)
		return -EINVAL;
	pthread_mutex_lock(&gt->mu);
	n = (struct node_ent *)ht_find(&gt->nodes, node_id);
	/* Follow clone -> original (a clone of a cloned graph takes several hops). */
	for (int hops = 0; n && !n->has_epoch && n->original && hops < 8; hops++)
		n = (struct node_ent *)ht_find(&gt->nodes, n->original);
	if (n && n->has_epoch) {
		if (epoch)
			*epoch = n->epoch;
		if (version)
			*version = n->version;
		err = 0;
	}
	pthread_mutex_unlock(&gt->mu);
	return err;
}

LIN_API int lin_graph_exec_ordinal(lin_graph_tracker *gt, uint64_t exec_id, uint64_t *ordinal)
{
	struct owner_ent *x;

	if (!gt || !ordinal)
		return -EINVAL;
	pthread_mutex_lock(&gt->mu);
	x = (struct owner_ent *)ht_find(&gt->execs, exec_id);
	if (x)
		*ordinal = x->ordinal;
	pthread_mutex_unlock(&gt->mu);
	return x ? 0 : -LIN_ENOTFOUND;
}
