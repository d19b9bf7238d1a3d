/* SPDX-License-Identifier: MIT */
/*
 * registry.c - live requests and epochs.
 *
 * Two structures. A slot array (chunks of 64 Ki slots, never freed before the runtime)
 * holds (id, version) per live entity: a token names its slot, so the launch-path check
 * reads one cache line and no lock (lin_registry_check in rt.h). A cds_lfht hash table
 * maps id -> entity for lookups by id (declare under a parent, retire, info); it is read
 * under the urcu-bp read lock, and removed entities are freed by call_rcu after a grace
 * period, so a reader never sees freed memory.
 *
 * Flavour: urcu-bp. The library runs on its callers' threads and cannot make them register
 * with RCU or unregister at exit; bp registers a thread on its first read lock (~0.5 us,
 * once) and unregisters it from a pthread-key destructor. The read side is inlined
 * (_LGPL_SOURCE; liburcu is LGPL-2.1+, which permits inlining its fast paths into MIT code).
 * The launch path takes no read lock at all.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>

#include "rt.h"

struct lin_entity {
	struct cds_lfht_node node;
	struct rcu_head rh;
	uint64_t id;
	uint64_t parent;
	_Atomic uint32_t version;
	uint32_t slot;
	uint8_t kind;
	size_t n;
	uint64_t req[];
};

static unsigned long hash_id(uint64_t x)
{
	/* splitmix64 finaliser: cds_lfht needs every bit mixed (split-ordered list). */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (unsigned long)x;
}

static int match_id(struct cds_lfht_node *node, const void *key)
{
	const struct lin_entity *e = caa_container_of(node, struct lin_entity, node);
	return e->id == *(const uint64_t *)key;
}

int lin_registry_init(struct lin_registry *reg)
{
	memset(reg, 0, sizeof(*reg));
	if (pthread_mutex_init(&reg->lock, NULL))
		return -ENOMEM;
	reg->ht = cds_lfht_new_flavor(1024, 1024, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				      &urcu_bp_flavor, NULL);
	if (!reg->ht) {
		pthread_mutex_destroy(&reg->lock);
		return -ENOMEM;
	}
	atomic_store(&reg->next_id, 1);
	return 0;
}

static void free_entity_rcu(struct rcu_head *rh)
{
	/* Readers released &rh after their last access; the grace period orders them. */
	LIN_TSAN_ACQUIRE(rh);
	free(caa_container_of(rh, struct lin_entity, rh));
}

void lin_registry_fini(struct lin_registry *reg, bool forked_child)
{
	if (!reg->ht)
		return;
	if (forked_child) {
		/* The child of a fork must not wait for a grace period or a table resize: a
		 * reader inside its read-side section, or a resize under way, in the parent at
		 * the fork never finish in the child, and urcu_bp_barrier or cds_lfht_destroy
		 * would hang (seen: 1 run in 30). The table and the entities still in it are
		 * left to the child's exit; nothing reaches them after this. */
		reg->ht = NULL;
		goto free_slots;
	}
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	urcu_bp_read_lock();
	cds_lfht_first(reg->ht, &it);
	while ((node = cds_lfht_iter_get_node(&it)) != NULL) {
		cds_lfht_next(reg->ht, &it);
		if (cds_lfht_del(reg->ht, node) == 0)
			urcu_bp_call_rcu(&caa_container_of(node, struct lin_entity, node)->rh,
					 free_entity_rcu);
	}
	urcu_bp_read_unlock();
	/* Wait for the frees above, then destroy the empty table, both outside any read-side
	 * section (docs/architecture.md, "What the registry relies on in liburcu 0.13"). */
	urcu_bp_barrier();
	cds_lfht_destroy(reg->ht, NULL);
	reg->ht = NULL;
free_slots:
	for (uint32_t i = 0; i < LIN_MAX_CHUNKS; i++)
		free(atomic_load(&reg->chunks[i]));
	pthread_mutex_destroy(&reg->lock);
}

/* Pop a free slot, growing by one chunk when none is left. Called with reg->lock held. */
static int slot_alloc_locked(struct lin_registry *reg, uint32_t *out)
{
	if (!reg->free_head) {
		if (reg->nchunks >= LIN_MAX_CHUNKS)
			return -ENOSPC;
		struct lin_slot *chunk = calloc(LIN_CHUNK_SLOTS, sizeof(*chunk));
		if (!chunk)
			return -ENOMEM;
		uint32_t base = reg->nchunks << LIN_CHUNK_SHIFT;
		for (uint32_t i = 0; i < LIN_CHUNK_SLOTS; i++)
			chunk[i].next_free = (i + 1 < LIN_CHUNK_SLOTS) ? base + i + 2 : 0;
		/* slot 0 is never handed out: a zeroed token must not name a real slot */
		uint32_t first = reg->nchunks == 0 ? 1 : 0;
		atomic_store_explicit(&reg->chunks[reg->nchunks], chunk, memory_order_release);
		reg->nchunks++;
		reg->free_head = base + first + 1;
	}
	uint32_t s = reg->free_head - 1;
	reg->free_head = lin_registry_slot(reg, s)->next_free;
	*out = s;
	return 0;
}

int lin_registry_add(struct lin_registry *reg, uint8_t kind, uint64_t parent,
		     const uint64_t *requests, size_t n, uint64_t *id, uint32_t *slot)
{
	struct lin_entity *e = malloc(sizeof(*e) + n * sizeof(uint64_t));
	if (!e)
		return -ENOMEM;
	e->id = atomic_fetch_add_explicit(&reg->next_id, 1, memory_order_relaxed);
	e->parent = parent;
	e->kind = kind;
	e->n = n;
	if (n)
		memcpy(e->req, requests, n * sizeof(uint64_t));
	atomic_init(&e->version, 1);
	cds_lfht_node_init(&e->node);

	pthread_mutex_lock(&reg->lock);
	int err = slot_alloc_locked(reg, &e->slot);
	pthread_mutex_unlock(&reg->lock);
	if (err) {
		free(e);
		return err;
	}
	struct lin_slot *s = lin_registry_slot(reg, e->slot);
	atomic_store_explicit(&s->version, 1, memory_order_relaxed);
	atomic_store_explicit(&s->id, e->id, memory_order_release);

	LIN_TSAN_RELEASE(e); /* published by cds_lfht_add's rcu_assign_pointer */
	urcu_bp_read_lock();
	cds_lfht_add(reg->ht, hash_id(e->id), &e->node);
	urcu_bp_read_unlock();
	atomic_fetch_add_explicit(kind == LIN_TARGET_REQUEST ? &reg->live_requests : &reg->live_epochs,
				  1, memory_order_relaxed);
	*id = e->id;
	*slot = e->slot;
	return 0;
}

/* Find a live entity; call under the read lock. */
static struct lin_entity *find_locked(struct lin_registry *reg, uint64_t id)
{
	struct cds_lfht_iter it;
	cds_lfht_lookup(reg->ht, hash_id(id), match_id, &id, &it);
	struct cds_lfht_node *node = cds_lfht_iter_get_node(&it);
	if (!node)
		return NULL;
	struct lin_entity *e = caa_container_of(node, struct lin_entity, node);
	LIN_TSAN_ACQUIRE(e);
	return e;
}

/* Call after the last access to @e inside the read-side section. */
static void done_with(struct lin_entity *e)
{
	LIN_TSAN_RELEASE(&e->rh);
	(void)e;
}

/*
 * Removal and re-issue change the slot and the entity together under reg->lock, so a
 * re-issue cannot write the version of a slot that a concurrent removal already freed and
 * another entity reused. Neither is on the launch path.
 */
int lin_registry_remove(struct lin_registry *reg, uint64_t id, uint8_t kind, uint32_t *version)
{
	int err = -LIN_ENOTFOUND;
	uint32_t v = 0;
	urcu_bp_read_lock();
	struct lin_entity *e = find_locked(reg, id);
	if (e && (!kind || e->kind == kind)) {
		pthread_mutex_lock(&reg->lock);
		if (cds_lfht_del(reg->ht, &e->node) == 0) {
			/* Id first, so a concurrent check that reads the id twice sees it. */
			struct lin_slot *s = lin_registry_slot(reg, e->slot);
			atomic_store_explicit(&s->id, 0, memory_order_release);
			v = atomic_load_explicit(&e->version, memory_order_relaxed);
			atomic_store_explicit(&s->version, v + 1, memory_order_release);
			s->next_free = reg->free_head;
			reg->free_head = e->slot + 1;
			err = 0;
		}
		pthread_mutex_unlock(&reg->lock);
		if (!err)
			atomic_fetch_sub_explicit(e->kind == LIN_TARGET_REQUEST ? &reg->live_requests
										: &reg->live_epochs,
						  1, memory_order_relaxed);
		done_with(e);
		if (!err)
			urcu_bp_call_rcu(&e->rh, free_entity_rcu);
	}
	urcu_bp_read_unlock();
	if (!err && version)
		*version = v;
	return err;
}

int lin_registry_reissue(struct lin_registry *reg, uint64_t id, uint32_t *version)
{
	int err = -LIN_ENOTFOUND;
	uint32_t v = 0;
	urcu_bp_read_lock();
	struct lin_entity *e = find_locked(reg, id);
	if (e && e->kind == LIN_TARGET_EPOCH) {
		pthread_mutex_lock(&reg->lock);
		if (!cds_lfht_is_node_deleted(&e->node)) {
			v = atomic_fetch_add_explicit(&e->version, 1, memory_order_acq_rel) + 1;
			atomic_store_explicit(&lin_registry_slot(reg, e->slot)->version, v,
					      memory_order_release);
			err = 0;
		}
		pthread_mutex_unlock(&reg->lock);
		done_with(e);
	}
	urcu_bp_read_unlock();
	if (!err && version)
		*version = v;
	return err;
}

int lin_registry_info(struct lin_registry *reg, uint64_t id, struct lin_entity_info *info,
		      uint64_t *requests, size_t cap, uint32_t *slot)
{
	urcu_bp_read_lock();
	struct lin_entity *e = find_locked(reg, id);
	if (!e) {
		urcu_bp_read_unlock();
		return -LIN_ENOTFOUND;
	}
	if (info) {
		info->kind = e->kind;
		info->version = atomic_load_explicit(&e->version, memory_order_acquire);
		info->parent = e->parent;
		info->n_requests = e->n;
	}
	if (requests && cap)
		memcpy(requests, e->req, (cap < e->n ? cap : e->n) * sizeof(uint64_t));
	if (slot)
		*slot = e->slot;
	done_with(e);
	urcu_bp_read_unlock();
	return 0;
}
