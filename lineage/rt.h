/* SPDX-License-Identifier: MIT */
/*
 * rt.h - the runtime's internal structures, shared by runtime.c, registry.c, thread.c,
 * token.c and writer.c. Never installed.
 */
#ifndef LINEAGE_RT_H
#define LINEAGE_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lineage/runtime.h"
#include "lineage/tap.h"
#include "lineage/trace_format.h"
#include "log.h"
#include "records.h"
#include "misuse.h"
#include "rt_internal.h"
#include "writer.h"

#define LIN_LIKELY(x) __builtin_expect(!!(x), 1)
#define LIN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LIN_CACHELINE 64

/*
 * ThreadSanitizer does not model liburcu's publication (rcu_assign_pointer inside
 * cds_lfht) or its grace periods. These annotations state the happens-before edges RCU
 * provides, so TSan checks our code and not liburcu's; they compile to nothing otherwise.
 */
#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define LIN_TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define LIN_TSAN_RELEASE(p) __tsan_release((void *)(p))
#else
#define LIN_TSAN_ACQUIRE(p) ((void)0)
#define LIN_TSAN_RELEASE(p) ((void)0)
#endif

#define LIN_MAX_SCOPES 64
#define LIN_MAX_LAUNCHES 16

/* ---------------------------------------------------------------- clock (clock.c) */

struct lin_clock {
	bool use_tsc;
	double ns_per_tick; /* calibrated once per process (clock.c) */
	uint64_t tsc0;      /* reference pair */
	uint64_t ns0;
	double tsc_hz;
};

void lin_clock_init(struct lin_clock *c);
uint64_t lin_clock_mono_ns(void);
uint64_t lin_clock_ticks_to_ns(const struct lin_clock *c, uint64_t ticks);

static inline uint64_t lin_clock_ticks(const struct lin_clock *c)
{
#if defined(__x86_64__) || defined(__i386__)
	if (LIN_LIKELY(c->use_tsc))
		return __builtin_ia32_rdtsc();
#endif
	return lin_clock_mono_ns();
}

/* ---------------------------------------------------------------- events (thread.c) */

/*
 * A fixed-size event appended on the launch path; encoded later by the writer. The meaning
 * of a..d per type is documented beside each producer; `owned` is a malloc'd blob the
 * writer frees after encoding (or the producer frees when the event is dropped).
 */
struct lin_event {
	uint8_t type;     /* LIN_REC_* */
	uint8_t kind;     /* LIN_TARGET_*; launch: 1 when the epoch was pushed */
	uint16_t depth;   /* scope depth; misuse: enum lin_misuse_cause */
	uint32_t version; /* 0: unknown */
	uint64_t ticks;
	uint64_t a; /* the id the record is about, or LIN_NIL */
	uint64_t b; /* per type: seq, capture, reason, detail, name or blob */
};
_Static_assert(sizeof(struct lin_event) == 32, "two events per cache line");

/* What request_begin and epoch_declare events own (freed by the writer). */
struct lin_blob {
	char *name;
	uint64_t user_id;               /* LIN_NIL: none */
	uint64_t parent;                /* LIN_NIL: none */
	struct lin_w3c_context *remote; /* requests begun from received headers, or NULL */
	const uint64_t *shares;         /* epochs: n packed shares (LIN_SHARE_PACK) after req,
					 * or NULL */
	size_t n;
	uint64_t req[];
};

struct lin_scope_ent {
	uint64_t id;
	uint64_t cookie;
	uint32_t version;
	uint32_t slot;
	uint8_t kind;
	uint8_t late; /* enum lin_late: adopted after its version ended */
};

struct lin_tstate {
	/* producer side: written by the owning thread only */
	uint64_t head;
	uint64_t tail_cache; /* last tail seen; reloaded only when the buffer looks full */
	struct lin_event *ev;
	uint32_t mask;
	uint32_t kick_mask; /* every (mask + 1) / 4 events the fill is looked at */
	uint32_t tid;
	uint32_t serial;
	uint32_t depth;
	uint32_t ctr; /* scope/launch cookie counter */
	uint32_t capture_seq;
	uint32_t nlaunch;
	struct lin_scope_ent scopes[LIN_MAX_SCOPES];
	uint64_t launches[LIN_MAX_LAUNCHES];
	uint64_t launch_ext[LIN_MAX_LAUNCHES]; /* the id each open bracket pushed; 0: none */
	_Atomic uint64_t pub_head;
	_Atomic uint64_t dropped;
	/* consumer side: the writer */
	_Alignas(LIN_CACHELINE) _Atomic uint64_t tail;
	uint64_t dropped_reported;
	_Atomic int exited;
	struct lin_tstate *next;
	lin_runtime *rt;
};

struct lin_tstate *lin_tstate_slow(lin_runtime *rt);
void lin_launch_pop_open(lin_runtime *rt, struct lin_tstate *ts);
void lin_tstate_free(struct lin_tstate *ts);
void lin_tstate_key_dtor(void *p);
void lin_event_drop_owned(struct lin_event *e);
void lin_blob_free(struct lin_blob *b);

/* ---------------------------------------------------------------- registry (registry.c) */

struct lin_slot {
	_Atomic uint64_t id;
	_Atomic uint32_t version;
	uint32_t next_free;
};

#define LIN_CHUNK_SHIFT 16
#define LIN_CHUNK_SLOTS (1u << LIN_CHUNK_SHIFT)
#define LIN_MAX_CHUNKS 256 /* 16 Mi live requests and epochs */

struct lin_entity;

struct lin_registry {
	_Atomic(struct lin_slot *) chunks[LIN_MAX_CHUNKS];
	pthread_mutex_t lock; /* slot allocation only; never taken on the launch path */
	uint32_t free_head;   /* index+1 of the first free slot; 0 = none */
	uint32_t nchunks;
	struct cds_lfht *ht; /* id -> entity */
	_Atomic uint64_t next_id;
	_Atomic uint64_t live_requests;
	_Atomic uint64_t live_epochs;
};

int lin_registry_init(struct lin_registry *reg);
/* Free the registry. In a fork child (@forked_child) nothing waits for RCU: see registry.c. */
void lin_registry_fini(struct lin_registry *reg, bool forked_child);
/* Insert a new entity; fills *id, *slot. requests may be NULL. */
int lin_registry_add(struct lin_registry *reg, uint8_t kind, uint64_t parent,
		     const uint64_t *requests, size_t n, uint64_t *id, uint32_t *slot);
/* Remove; returns the final version or a negative error. kind 0 = any. */
int lin_registry_remove(struct lin_registry *reg, uint64_t id, uint8_t kind, uint32_t *version);
int lin_registry_reissue(struct lin_registry *reg, uint64_t id, uint32_t *version);
int lin_registry_info(struct lin_registry *reg, uint64_t id, struct lin_entity_info *info,
		      uint64_t *requests, size_t cap, uint32_t *slot);

static inline struct lin_slot *lin_registry_slot(struct lin_registry *reg, uint32_t slot)
{
	uint32_t c = slot >> LIN_CHUNK_SHIFT;
	if (LIN_UNLIKELY(c >= LIN_MAX_CHUNKS))
		return NULL;
	struct lin_slot *chunk = atomic_load_explicit(&reg->chunks[c], memory_order_acquire);
	if (LIN_UNLIKELY(!chunk))
		return NULL;
	return &chunk[slot & (LIN_CHUNK_SLOTS - 1)];
}

/*
 * lin_registry_check - is (id, version) still the live occupant of @slot? Reads one cache
 * line: the id before and after the version, so a concurrent retire or reuse is seen (ids
 * are never reused, so an id read twice means it held the slot in between).
 */
static inline bool lin_registry_check(struct lin_registry *reg, uint32_t slot, uint64_t id, uint32_t version)
{
	struct lin_slot *s = lin_registry_slot(reg, slot);
	if (LIN_UNLIKELY(!s))
		return false;
	uint64_t i1 = atomic_load_explicit(&s->id, memory_order_acquire);
	uint32_t v = atomic_load_explicit(&s->version, memory_order_acquire);
	uint64_t i2 = atomic_load_explicit(&s->id, memory_order_acquire);
	return i1 == id && i2 == id && v == version;
}

/* ---------------------------------------------------------------- the runtime */

struct lin_runtime {
	struct lin_registry reg;
	struct lin_clock clock;
	uint64_t gen;    /* unique per runtime in this process */
	uint16_t rt_tag; /* identifies this runtime in tokens */
	uint32_t flags;
	uint32_t ext_kind;
	uint32_t ring_events;
	uint32_t flush_ms;
	struct lin_logger logger;
	lin_launch_observer_fn observer;
	void *observer_user;
	struct lin_backend_ops be;
	const struct lin_cupti_backend *cupti; /* LIN_BACKEND_CUPTI's table (rt_internal.h) */
	bool have_backend;
	enum lin_backend_kind backend_kind;
	bool device_clock_host; /* the backend's device timestamps are our host clock */
	const char *cupti_status;
	pthread_key_t key;

	/* threads */
	pthread_mutex_t threads_lock;
	struct lin_tstate *threads;
	_Atomic uint32_t thread_serial;
	_Atomic uint64_t nthreads;
	_Atomic uint64_t misuse;
	_Atomic uint64_t late_adopts;         /* adopts of a token whose version had ended */
	_Atomic uint64_t late_launches;       /* launches under a version that had ended */
	_Atomic uint64_t no_context_captures; /* lin_token_capture with nothing current */
	_Atomic uint64_t events_retired;
	_Atomic uint64_t dropped_retired;

	/* the trace writer (writer.c): an object of its own */
	struct lin_writer *w;
	struct lin_doorbell *bell;   /* the writer's, rung by producers (lin_tstate_kick) */
	bool forked_child;           /* this copy lives in a child of fork(): detached */
	struct lin_runtime *next_rt; /* list of live runtimes, for the fork handlers */
};

/* Per-thread state of the calling thread for @rt, created on first use (NULL: ENOMEM). */
extern __thread struct lin_tls_cache {
	const lin_runtime *rt;
	uint64_t gen;
	struct lin_tstate *ts;
} lin_tls __attribute__((tls_model("initial-exec")));

static inline struct lin_tstate *lin_tstate_get(lin_runtime *rt)
{
	if (LIN_LIKELY(lin_tls.rt == rt && lin_tls.gen == rt->gen))
		return lin_tls.ts;
	return lin_tstate_slow(rt);
}

/*
 * The launch path writes an event in place: reserve the next slot (NULL, and a drop
 * counted, when the buffer is full; never blocks), fill its fields, commit. Filling the
 * slot directly matters: building the event on the stack and copying it costs ~10 ns here
 * in failed store-to-load forwarding (narrow stores read back as one 16-byte load).
 */
static inline struct lin_event *lin_event_reserve(struct lin_tstate *ts)
{
	uint64_t h = ts->head;
	if (LIN_UNLIKELY(h - ts->tail_cache > ts->mask)) {
		ts->tail_cache = atomic_load_explicit(&ts->tail, memory_order_acquire);
		if (h - ts->tail_cache > ts->mask) {
			atomic_fetch_add_explicit(&ts->dropped, 1, memory_order_relaxed);
			return NULL;
		}
	}
	return &ts->ev[h & ts->mask];
}

void lin_tstate_kick(struct lin_tstate *ts);

/* Commit; at every quarter of the buffer, wake the writer if it is half full (a thread
 * launching faster than the writer's polling can hold: lin_tstate_kick). */
static inline void lin_event_commit(struct lin_tstate *ts)
{
	uint64_t h = ++ts->head;
	atomic_store_explicit(&ts->pub_head, h, memory_order_release);
	if (LIN_UNLIKELY((h & ts->kick_mask) == 0))
		lin_tstate_kick(ts);
}

/* Fill and commit in one call. */
static inline struct lin_event *lin_event_put(struct lin_tstate *ts, uint8_t type, uint8_t kind,
					      uint16_t depth, uint32_t version, uint64_t ticks,
					      uint64_t a, uint64_t b)
{
	struct lin_event *d = lin_event_reserve(ts);
	if (LIN_UNLIKELY(!d))
		return NULL;
	d->type = type;
	d->kind = kind;
	d->depth = depth;
	d->version = version;
	d->ticks = ticks;
	d->a = a;
	d->b = b;
	lin_event_commit(ts);
	return d;
}

/* Append a prepared event (off the launch path). Returns false when it was dropped. */
static inline bool lin_event_push(struct lin_tstate *ts, const struct lin_event *e)
{
	return lin_event_put(ts, e->type, e->kind, e->depth, e->version, e->ticks, e->a, e->b);
}

/* Launch events' kind: bit 0 the epoch was pushed, bits 1-2 enum lin_late. */
#define LIN_EV_LAUNCH_PUSHED 1u
#define LIN_EV_LATE_SHIFT 1

/* Record a misuse event (and count it). target/detail: LIN_NIL, version: 0 when unknown. */
void lin_record_misuse(lin_runtime *rt, struct lin_tstate *ts, enum lin_misuse_cause cause,
		       uint8_t kind, uint64_t target, uint32_t version, uint64_t detail);

#endif
