/* SPDX-License-Identifier: MIT */
/*
 * runtime.c - runtime life cycle, options, requests and epochs (logging: log.c).
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu/urcu-bp.h>

#include "lineage/w3c.h"
#include "opts.h"
#include "rt.h"
#include "taps.h"

static _Atomic uint64_t runtime_gen = 1;

/* ---------------------------------------------------------------- logging (log.c) */

void lin_rt_log(const lin_runtime *rt, enum lin_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lin_logger_vlog(&rt->logger, level, fmt, ap);
	va_end(ap);
}

void lin_rt_status(const lin_runtime *rt, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lin_logger_vstatus(&rt->logger, fmt, ap);
	va_end(ap);
}

LIN_API void lin_runtime_log(const lin_runtime *rt, enum lin_log_level level, const char *fmt, ...)
{
	if (!rt || (unsigned)level > LIN_LOG_DEBUG || !fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	lin_logger_vlog(&rt->logger, level, fmt, ap);
	va_end(ap);
}

uint64_t lin_rt_now_ns(const lin_runtime *rt)
{
	/* The clock the writer converts event ticks with: records written directly (graph,
	 * CUPTI clock pairs) and events must order and compare on one clock. */
	return lin_clock_ticks_to_ns(&rt->clock, lin_clock_ticks(&rt->clock));
}

void lin_rt_clock_get(const lin_runtime *rt, struct lin_rt_clock *c)
{
	*c = (struct lin_rt_clock){ rt->clock.ns_per_tick, rt->clock.tsc0, rt->clock.ns0,
				    rt->clock.use_tsc };
}

uint64_t lin_rt_clock_ns(const struct lin_rt_clock *c)
{
	struct lin_clock k = {
		.use_tsc = c->use_tsc, .ns_per_tick = c->ns_per_tick, .tsc0 = c->tsc0, .ns0 = c->ns0
	};
	return lin_clock_ticks_to_ns(&k, lin_clock_ticks(&k));
}

void lin_rt_set_device_clock_host(lin_runtime *rt) { rt->device_clock_host = true; }

LIN_API uint64_t lin_runtime_now_ns(const lin_runtime *rt)
{
	if (rt)
		return lin_rt_now_ns(rt);
	struct lin_clock c; /* the process's calibration, which every runtime takes */
	lin_clock_init(&c);
	return lin_clock_ticks_to_ns(&c, lin_clock_ticks(&c));
}

uint32_t lin_rt_ext_kind(const lin_runtime *rt) { return rt->ext_kind; }

/* ---------------------------------------------------------------- options */

/* The options refused with a log line that says why: the reserved fields (set by a
 * program built against 0.4 or older to stream spans) and the tap specs. */
static int check_logged(const struct lin_runtime_opts *o)
{
	struct lin_logger lg;
	lin_logger_init(&lg, o->log, o->log_user);
	if (o->reserved_0_2[0] || o->reserved_0_2[1] || o->reserved_0_2[2] || o->reserved_0_4) {
		lin_logger_log(&lg, LIN_LOG_ERROR,
			       "lin_runtime_opts: reserved fields set (by a program built against "
			       "liblineage 0.4 or older?): attach exporters as taps (lineage/tap.h)");
		return -EINVAL;
	}
	return lin_taps_check(o, &lg);
}

static int load_opts(const struct lin_runtime_opts *in, struct lin_runtime_opts *o)
{
	int err = lin_opts_copy(o, sizeof(*o), in);
	if (err || !in)
		return err;
	if (o->flags & ~LIN_RT_FLAGS_ALL)
		return -EINVAL;
	if (o->thread_buffer_events && (o->thread_buffer_events & (o->thread_buffer_events - 1)))
		return -EINVAL;
	if (o->thread_buffer_events && o->thread_buffer_events < 64)
		return -EINVAL;
	if (o->backend > LIN_BACKEND_CUSTOM)
		return -EINVAL;
	if (o->backend == LIN_BACKEND_CUSTOM &&
	    (!o->backend_ops || o->backend_ops->sz < offsetof(struct lin_backend_ops, flags) ||
	     !o->backend_ops->push || !o->backend_ops->pop))
		return -EINVAL;
	if (o->trace_path && o->trace_write)
		return -EINVAL;
	if (o->ext_kind > 5)
		return -EINVAL;
	if (o->cupti_flags & ~LIN_CUPTI_FLAGS_ALL)
		return -EINVAL;
	if (o->cupti_buffer_kib && (o->cupti_buffer_kib < 4 || o->cupti_buffer_kib > (1u << 20)))
		return -EINVAL;
	return check_logged(o);
}

/* ---------------------------------------------------------------- life cycle */

/*
 * fork(). Live runtimes are kept on a list so the fork handlers can take every lock the
 * writer and the registry use before the fork, and release them on both sides after it.
 * The child is detached: its copies of the runtimes write nothing (the trace file belongs to
 * the parent), call no backend, and have no writer thread; their calls still succeed and
 * lin_runtime_free in the child releases the memory. The parent's trace is untouched.
 */
static pthread_mutex_t rt_list_lock = PTHREAD_MUTEX_INITIALIZER;
static lin_runtime *rt_list;

static void fork_prepare(void)
{
	pthread_mutex_lock(&rt_list_lock);
	for (lin_runtime *rt = rt_list; rt; rt = rt->next_rt) {
		lin_writer_fork_lock(rt->w);
		pthread_mutex_lock(&rt->threads_lock);
		pthread_mutex_lock(&rt->reg.lock);
		lin_writer_fork_taps_lock(rt->w);
	}
}

/* @child: the taps' copies are the child's to drop (its output is the parent's). */
static void unlock_all(bool child)
{
	for (lin_runtime *rt = rt_list; rt; rt = rt->next_rt) {
		lin_writer_fork_taps_unlock(rt->w, child);
		pthread_mutex_unlock(&rt->reg.lock);
		pthread_mutex_unlock(&rt->threads_lock);
		lin_writer_fork_unlock(rt->w);
	}
	pthread_mutex_unlock(&rt_list_lock);
}

static void fork_parent(void) { unlock_all(false); }

static void fork_child(void)
{
	/* The child's one thread has an id of its own: a runtime it creates must not stamp
	 * its records with the parent thread's (the cached gettid). */
	lin_rt_tid_forget();
	for (lin_runtime *rt = rt_list; rt; rt = rt->next_rt) {
		rt->forked_child = true;
		rt->have_backend = false;
		lin_writer_fork_detach(rt->w); /* no output; its thread was not copied */
		for (struct lin_tstate *ts = rt->threads; ts; ts = ts->next) {
			if (!(lin_tls.rt == rt && lin_tls.ts == ts))
				atomic_store(&ts->exited, 1); /* their threads are not in the child */
			/* The parent's threads' rings, even the forking thread's: never read here. */
			lin_sched_forget(ts->sched);
			ts->sched = NULL;
		}
		rt->sched.on = false;
	}
	/* A tap (an exporter's stream) is the parent's: the child's copy is freed, unwritten. */
	unlock_all(true);
}

static void rt_list_add(lin_runtime *rt)
{
	pthread_mutex_lock(&rt_list_lock);
	rt->next_rt = rt_list;
	rt_list = rt;
	pthread_mutex_unlock(&rt_list_lock);
}

static void rt_list_remove(lin_runtime *rt)
{
	pthread_mutex_lock(&rt_list_lock);
	for (lin_runtime **pp = &rt_list; *pp; pp = &(*pp)->next_rt) {
		if (*pp == rt) {
			*pp = rt->next_rt;
			break;
		}
	}
	pthread_mutex_unlock(&rt_list_lock);
}

static void fork_handlers_once(void)
{
	/* Ours first: prepare handlers run in reverse order of registration, so liburcu's
	 * quiesce the call_rcu thread before we take the registry lock, which a reader inside
	 * a read-side section may be waiting for (taking it first deadlocks the fork). */
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	/* liburcu-bp registers no fork handlers; without them a child of a process with a
	 * reader inside a read-side section hangs in synchronize_rcu (docs/architecture.md,
	 * "What the registry relies on in liburcu 0.13"). */
	pthread_atfork(urcu_bp_before_fork, urcu_bp_after_fork_parent, urcu_bp_after_fork_child);
	pthread_atfork(urcu_bp_call_rcu_before_fork, urcu_bp_call_rcu_after_fork_parent,
		       urcu_bp_call_rcu_after_fork_child);
	/* Start the call_rcu helper now, with every signal blocked, rather than lazily on
	 * an application thread that would pass it its signal mask (liburcu 0.13). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	(void)urcu_bp_get_default_call_rcu_data();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

/*
 * The 16-bit tag tokens carry to name their runtime: mixed from the runtime's serial, the
 * process id and the clock, so runtimes of different processes (and of one process) differ.
 * 16 bits still collide about once in 65,536 pairs: the tag is a guard against mistakes,
 * not an authentication (a token's id and version must also match a live slot).
 */
/*
 * The runtime's 16-bit tag, in every token it makes: random (tokens of runtimes in other
 * processes rarely match it), and never one an earlier runtime of this process had, until
 * all 65,535 have been given out (then the set starts over: a binary token kept from a
 * runtime freed 65,535 runtimes ago could pass for this one's). So a binary token of
 * another runtime of this process, live or freed, is always foreign (-LIN_EFOREIGN), never
 * adopted, late or not, as this runtime's.
 */
static pthread_mutex_t tags_mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t tags_used[65536 / 8];
static uint32_t tags_n;

static uint16_t runtime_tag(uint64_t gen)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = gen ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
		     ((uint64_t)ts.tv_sec << 20);
	x += 0x9e3779b97f4a7c15ULL; /* splitmix64 */
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	uint16_t tag = (uint16_t)(x >> 48);
	pthread_mutex_lock(&tags_mu);
	if (tags_n >= 65535) {
		memset(tags_used, 0, sizeof(tags_used));
		tags_n = 0;
	}
	/* The next unused one from the random start (0 is never a tag). */
	while (!tag || (tags_used[tag / 8] & (1u << (tag % 8))))
		tag++;
	tags_used[tag / 8] |= (uint8_t)(1u << (tag % 8));
	tags_n++;
	pthread_mutex_unlock(&tags_mu);
	return tag;
}

static int open_backend(lin_runtime *rt, const struct lin_runtime_opts *o)
{
	rt->backend_kind = o->backend;
	switch (o->backend) {
	case LIN_BACKEND_NONE: return 0;
	case LIN_BACKEND_CUSTOM: {
		/* Only what the caller's sz covers: a caller built against 0.2 has no flags. */
		size_t n = o->backend_ops->sz < sizeof(rt->be) ? o->backend_ops->sz : sizeof(rt->be);
		memset(&rt->be, 0, sizeof(rt->be));
		memcpy(&rt->be, o->backend_ops, n);
		if (rt->be.flags & ~LIN_BACKEND_F_HOST_CLOCK)
			return -EINVAL;
		rt->device_clock_host = rt->be.flags & LIN_BACKEND_F_HOST_CLOCK;
		rt->have_backend = true;
		return 0;
	}
	case LIN_BACKEND_CUPTI: {
		const char *status = NULL;
		int err = rt->cupti->open(rt, o, &rt->be, &status);
		if (err) {
			rt->cupti_status = status ? status : "unavailable";
			/* Said once per runtime open, even with no callback and LINEAGE_LOG unset: a
			 * trace with no GPU records must not be the first sign (docs/cupti.md). */
			lin_rt_status(rt,
				      "CUPTI is not usable (%s): recording host-side lineage only, "
				      "this trace will hold no GPU records (no NVIDIA GPU or driver "
				      "here?); LINEAGE_LOG=off silences this line",
				      rt->cupti_status);
			return 0;
		}
		/* "ok", or what the binding lacks ("ok, ...", "attach: ..."): docs/cupti.md. */
		rt->cupti_status = status ? status : "ok";
		rt->have_backend = true;
		return 0;
	}
	}
	return -EINVAL;
}

/* The writer, its outputs open and its header written; on failure it is left for
 * lin_runtime_free. */
static int open_writer(lin_runtime *rt, const struct lin_runtime_opts *o)
{
	rt->w = lin_writer_new(rt);
	if (!rt->w)
		return -ENOMEM;
	rt->bell = lin_writer_bell(rt->w);
	return lin_writer_open(rt->w, o);
}

LIN_API int lin_runtime_create(const struct lin_runtime_opts *opts, lin_runtime **out)
{
	struct lin_runtime_opts o;
	if (!out)
		return -EINVAL;
	*out = NULL;
	int err = load_opts(opts, &o);
	if (err)
		return err;
	pthread_once(&global_once, fork_handlers_once);

	lin_runtime *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	rt->cupti = lin_rt_cupti_builtin;
	rt->gen = atomic_fetch_add(&runtime_gen, 1);
	rt->flags = o.flags;
	rt->ext_kind = o.ext_kind ? o.ext_kind : LIN_DEFAULT_EXT_KIND;
	rt->ring_events = o.thread_buffer_events ? o.thread_buffer_events : 16384;
	rt->flush_ms = o.flush_interval_ms ? o.flush_interval_ms : 50;
	lin_logger_init(&rt->logger, o.log, o.log_user);
	rt->observer = o.observer;
	rt->observer_user = o.observer_user;
	rt->rt_tag = runtime_tag(rt->gen);
	lin_clock_init(&rt->clock);
	/* Asked for and refused: said once, like an unusable CUPTI (the header says it too). */
	if (lin_sched_cfg_init(&rt->sched, o.flags & LIN_RT_SCHED_EVENTS))
		lin_rt_status(rt,
			      "host scheduling evidence (LIN_RT_SCHED_EVENTS) is off: the kernel "
			      "refused it: %s; the trace has no host_sched records",
			      rt->sched.status);

	if (pthread_mutex_init(&rt->threads_lock, NULL)) {
		free(rt);
		return -ENOMEM;
	}
	err = pthread_key_create(&rt->key, lin_tstate_key_dtor);
	if (err) {
		pthread_mutex_destroy(&rt->threads_lock);
		free(rt);
		return -err;
	}
	err = lin_registry_init(&rt->reg);
	/* Ids unique in the process, not only in the runtime: the n-th runtime of a process
	 * numbers from (n - 1) * 2^40 + 1, so two runtimes' traces of one process (a library
	 * and its application) never name the same request or epoch (docs/trace-format.md,
	 * Conventions). Below 2^62 (the late bits) for the first 2^22 runtimes; after that the
	 * ranges repeat. */
	if (!err)
		atomic_store(&rt->reg.next_id, (((rt->gen - 1) & ((1ull << 22) - 1)) << 40) + 1);
	if (!err)
		err = open_backend(rt, &o);
	if (!err)
		err = open_writer(rt, &o);
	if (!err && rt->backend_kind == LIN_BACKEND_CUPTI && rt->have_backend)
		rt->cupti->started(rt);
	if (!err)
		err = lin_writer_start(rt->w);
	if (err) {
		lin_runtime_free(rt);
		return err;
	}
	rt_list_add(rt);
	if (!urcu_bp_has_sys_membarrier)
		lin_rt_log(rt, LIN_LOG_INFO,
			   "membarrier unavailable: RCU read side falls back to memory fences");
	*out = rt;
	return 0;
}

LIN_API int lin_runtime_flush(lin_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	return lin_writer_drain(rt->w, true);
}

LIN_API void lin_runtime_free(lin_runtime *rt)
{
	if (!rt)
		return;
	rt_list_remove(rt);
	/* No more exit destructors against this runtime. */
	pthread_key_delete(rt->key);
	lin_writer_stop(rt->w);
	if (lin_tls.rt == rt && lin_tls.gen == rt->gen && lin_tls.ts)
		lin_launch_pop_open(rt, lin_tls.ts);
	if (rt->backend_kind == LIN_BACKEND_CUPTI && rt->have_backend)
		rt->cupti->close(rt);
	/* Scopes still open on live threads are reported before the states go. */
	pthread_mutex_lock(&rt->threads_lock);
	for (struct lin_tstate *ts = rt->threads; ts; ts = ts->next) {
		if (!atomic_load(&ts->exited) && ts->depth) {
			struct lin_scope_ent *top = &ts->scopes[ts->depth - 1];
			lin_record_misuse(rt, ts, LIN_MISUSE_THREAD_EXIT_OPEN_SCOPE, top->kind,
					  top->id, top->version, ts->depth);
		}
		atomic_store(&ts->exited, 1);
	}
	pthread_mutex_unlock(&rt->threads_lock);
	if (rt->w)
		lin_writer_drain(rt->w, true);
	lin_writer_free(rt->w);
	rt->w = NULL;
	rt->bell = NULL;
	if (lin_tls.rt == rt) {
		lin_tls.rt = NULL;
		lin_tls.ts = NULL;
	}
	lin_registry_fini(&rt->reg, rt->forked_child);
	pthread_mutex_destroy(&rt->threads_lock);
	free(rt);
}

LIN_API int lin_runtime_get_stats(lin_runtime *rt, struct lin_runtime_stats *st)
{
	if (!rt || !st || st->sz < sizeof(size_t) || st->sz > LIN_OPTS_OUT_MAX)
		return -EINVAL;
	struct lin_runtime_stats *out = st, full = { .sz = sizeof(full) };
	st = &full;
	st->live_requests = atomic_load(&rt->reg.live_requests);
	st->live_epochs = atomic_load(&rt->reg.live_epochs);
	uint64_t ev = atomic_load(&rt->events_retired), dr = atomic_load(&rt->dropped_retired);
	pthread_mutex_lock(&rt->threads_lock);
	for (struct lin_tstate *ts = rt->threads; ts; ts = ts->next) {
		ev += atomic_load_explicit(&ts->pub_head, memory_order_relaxed);
		dr += atomic_load_explicit(&ts->dropped, memory_order_relaxed);
	}
	pthread_mutex_unlock(&rt->threads_lock);
	st->events = ev + dr;
	st->events_dropped = dr;
	st->misuse = atomic_load(&rt->misuse);
	st->threads = atomic_load(&rt->nthreads);
	st->bytes_written = lin_writer_bytes_written(rt->w);
	st->late_adopts = atomic_load(&rt->late_adopts);
	st->late_launches = atomic_load(&rt->late_launches);
	st->captures_without_context = atomic_load(&rt->no_context_captures);
	return lin_opts_copy_out(out, &full, sizeof(full));
}

/* ---------------------------------------------------------------- requests and epochs */

static struct lin_blob *blob_new(const char *name, const uint64_t *req, size_t n,
				 const struct lin_epoch_share *shares)
{
	struct lin_blob *b = malloc(sizeof(*b) + (shares ? 2 : 1) * n * sizeof(uint64_t));
	if (!b)
		return NULL;
	b->user_id = LIN_NIL;
	b->parent = LIN_NIL;
	b->remote = NULL;
	b->shares = NULL;
	if (shares) {
		uint64_t *p = b->req + n;
		for (size_t i = 0; i < n; i++)
			p[i] = LIN_SHARE_PACK(shares[i].tokens, shares[i].flags);
		b->shares = p;
	}
	b->name = name ? strdup(name) : NULL;
	if (name && !b->name) {
		free(b);
		return NULL;
	}
	b->n = n;
	if (n)
		memcpy(b->req, req, n * sizeof(uint64_t));
	return b;
}

/* Push an event that may own a blob; frees the blob if the event is dropped. */
static void push_owned(struct lin_tstate *ts, struct lin_event *e)
{
	if (!lin_event_push(ts, e))
		lin_event_drop_owned(e);
}

static bool remote_valid(const struct lin_w3c_context *c)
{
	uint8_t t = 0, p = 0;
	for (int i = 0; i < 16; i++)
		t |= c->tp.trace_id[i];
	for (int i = 0; i < 8; i++)
		p |= c->tp.parent_id[i];
	return t && p && c->tp.version != 0xff;
}

LIN_API int lin_request_begin(lin_runtime *rt, const struct lin_request_opts *opts, uint64_t *id)
{
	struct lin_request_opts o;
	if (!rt || !id)
		return -EINVAL;
	int err = lin_opts_copy(&o, sizeof(o), opts);
	if (err)
		return err;
	if (o.remote && !remote_valid(o.remote))
		return -EINVAL;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (!ts)
		return -ENOMEM;
	struct lin_blob *b = NULL;
	if ((o.name || o.has_user_id || o.parent || o.remote) && !(b = blob_new(o.name, NULL, 0, NULL)))
		return -ENOMEM;
	if (b) {
		b->user_id = o.has_user_id ? o.user_id : LIN_NIL;
		b->parent = o.parent ? o.parent : LIN_NIL;
		if (o.remote && !(b->remote = malloc(sizeof(*b->remote)))) {
			lin_blob_free(b);
			return -ENOMEM;
		}
		if (o.remote)
			*b->remote = *o.remote;
	}
	uint32_t slot;
	err = lin_registry_add(&rt->reg, LIN_TARGET_REQUEST, o.parent, NULL, 0, id, &slot);
	if (err) {
		lin_blob_free(b);
		return err;
	}
	struct lin_event e = {
		.type = LIN_REC_REQUEST_BEGIN,
		.ticks = lin_clock_ticks(&rt->clock),
		.a = *id,
		.b = (uintptr_t)b,
	};
	push_owned(ts, &e);
	return 0;
}

LIN_API int lin_request_end(lin_runtime *rt, uint64_t id)
{
	if (!rt)
		return -EINVAL;
	int err = lin_registry_remove(&rt->reg, id, LIN_TARGET_REQUEST, NULL);
	if (err)
		return err;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (ts) {
		struct lin_event e = { .type = LIN_REC_REQUEST_END,
				       .ticks = lin_clock_ticks(&rt->clock),
				       .a = id };
		lin_event_push(ts, &e);
	}
	return 0;
}

/* Requests served by the current context; *parent set to the current epoch if any. */
static int current_requests(lin_runtime *rt, struct lin_tstate *ts, uint64_t **req, size_t *n,
			    uint64_t *parent, uint64_t *one)
{
	if (!ts->depth || !ts->scopes[ts->depth - 1].kind)
		return -LIN_ENOCONTEXT; /* none, or a none scope (lin_scope_enter_none) */
	const struct lin_scope_ent *top = &ts->scopes[ts->depth - 1];
	if (top->kind == LIN_TARGET_REQUEST) {
		*one = top->id;
		*req = one;
		*n = 1;
		return 0;
	}
	struct lin_entity_info info = { .sz = sizeof(info) };
	int err = lin_registry_info(&rt->reg, top->id, &info, one, 1, NULL);
	if (err)
		return err;
	*parent = top->id;
	if (info.n_requests <= 1) {
		*req = one;
		*n = info.n_requests;
		return 0;
	}
	uint64_t *all = malloc(info.n_requests * sizeof(uint64_t));
	if (!all)
		return -ENOMEM;
	err = lin_registry_info(&rt->reg, top->id, &info, all, info.n_requests, NULL);
	if (err) {
		free(all);
		return err;
	}
	*req = all;
	*n = info.n_requests;
	return 0;
}

static int check_requests_live(lin_runtime *rt, const uint64_t *req, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct lin_entity_info info = { .sz = sizeof(info) };
		if (lin_registry_info(&rt->reg, req[i], &info, NULL, 0, NULL) ||
		    info.kind != LIN_TARGET_REQUEST)
			return -LIN_ENOTFOUND;
	}
	return 0;
}

/* Shares name the requests given: n of them, each flag known, not prefill and decode, no
 * first token from a decode step. */
static bool shares_valid(const struct lin_epoch_share *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint32_t f = s[i].flags;
		if ((f & ~LIN_SHARE_FLAGS_ALL) || ((f & LIN_SHARE_PREFILL) && (f & LIN_SHARE_DECODE)) ||
		    ((f & LIN_SHARE_DECODE) && (f & LIN_SHARE_FIRST_TOKEN)))
			return false;
	}
	return true;
}

LIN_API int lin_epoch_declare(lin_runtime *rt, const struct lin_epoch_opts *opts, uint64_t *id)
{
	struct lin_epoch_opts o;
	if (!rt || !id)
		return -EINVAL;
	int err = lin_opts_copy(&o, sizeof(o), opts);
	if (err)
		return err;
	if ((o.n_requests && !o.requests) || (o.flags & ~LIN_EPOCH_FLAGS_ALL))
		return -EINVAL;
	bool none = o.flags & LIN_EPOCH_NO_REQUESTS;
	if (none && (o.n_requests || o.requests))
		return -EINVAL;
	if (o.shares && !shares_valid(o.shares, o.n_requests))
		return -EINVAL;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (!ts)
		return -ENOMEM;
	uint64_t one = 0, parent = o.parent, *req = (uint64_t *)o.requests;
	size_t n = o.n_requests;
	if (none) {
		req = NULL;
	} else if (!n) {
		uint64_t cur_parent = 0;
		err = current_requests(rt, ts, &req, &n, &cur_parent, &one);
		if (err)
			return err;
		if (!parent)
			parent = cur_parent;
	} else {
		err = check_requests_live(rt, req, n);
		if (err)
			return err;
	}
	if (!err && parent) {
		struct lin_entity_info info = { .sz = sizeof(info) };
		if (lin_registry_info(&rt->reg, parent, &info, NULL, 0, NULL) ||
		    info.kind != LIN_TARGET_EPOCH)
			err = -LIN_ENOTFOUND;
	}
	struct lin_blob *b = NULL;
	if (!err && !(b = blob_new(o.name, req, n, o.shares)))
		err = -ENOMEM;
	if (b)
		b->parent = parent ? parent : LIN_NIL;
	uint32_t slot;
	if (!err)
		err = lin_registry_add(&rt->reg, LIN_TARGET_EPOCH, parent, req, n, id, &slot);
	if (!err) {
		struct lin_event e = {
			.type = LIN_REC_EPOCH_DECLARE,
			.version = 1,
			.ticks = lin_clock_ticks(&rt->clock),
			.a = *id,
			.b = (uintptr_t)b,
		};
		push_owned(ts, &e);
	} else {
		lin_blob_free(b);
	}
	if (req != &one && req != o.requests)
		free(req);
	return err;
}

LIN_API int lin_epoch_reissue(lin_runtime *rt, uint64_t id, uint32_t reason, uint32_t *version)
{
	if (!rt || reason > LIN_REISSUE_REPLAY)
		return -EINVAL;
	uint32_t v;
	int err = lin_registry_reissue(&rt->reg, id, &v);
	if (err)
		return err;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (ts) {
		struct lin_event e = { .type = LIN_REC_EPOCH_REISSUE,
				       .version = v,
				       .ticks = lin_clock_ticks(&rt->clock),
				       .a = id,
				       .b = reason };
		lin_event_push(ts, &e);
	}
	if (version)
		*version = v;
	return 0;
}

LIN_API int lin_epoch_retire(lin_runtime *rt, uint64_t id)
{
	if (!rt)
		return -EINVAL;
	uint32_t v;
	int err = lin_registry_remove(&rt->reg, id, LIN_TARGET_EPOCH, &v);
	if (err)
		return err;
	struct lin_tstate *ts = lin_tstate_get(rt);
	if (ts) {
		struct lin_event e = { .type = LIN_REC_EPOCH_RETIRE,
				       .version = v,
				       .ticks = lin_clock_ticks(&rt->clock),
				       .a = id };
		lin_event_push(ts, &e);
	}
	return 0;
}

LIN_API int lin_entity_lookup(lin_runtime *rt, uint64_t id, struct lin_entity_info *info,
			      uint64_t *requests, size_t cap)
{
	if (!rt || (cap && !requests))
		return -EINVAL;
	if (info && (info->sz < sizeof(size_t) || info->sz > LIN_OPTS_OUT_MAX))
		return -EINVAL;
	struct lin_entity_info full = { .sz = sizeof(full) };
	int err = lin_registry_info(&rt->reg, id, info ? &full : NULL, requests, cap, NULL);
	if (!err && info)
		err = lin_opts_copy_out(info, &full, sizeof(full));
	return err;
}

/* The 0.1-0.3 name, deprecated in runtime.h but still exported (token.c has the others). */
LIN_API int lin_lookup(lin_runtime *rt, uint64_t id, struct lin_entity_info *info,
		       uint64_t *requests, size_t cap)
{
	return lin_entity_lookup(rt, id, info, requests, cap);
}
