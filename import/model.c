/* SPDX-License-Identifier: MIT */
/*
 * model.c - the imported event model: event storage, interned names, process and thread
 * names (the joins are in join.c, the command-line entry in run.c; docs/importers.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

#define NAME_MAX_LEN 4096

struct lin_imp_ev *lin_imp_push(struct lin_imp *m)
{
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 4096;
		if (nc > UINT32_MAX - 1)
			return NULL;
		struct lin_imp_ev *e = realloc(m->ev, nc * sizeof(*e));
		if (!e)
			return NULL;
		m->ev = e;
		m->cap = nc;
	}
	struct lin_imp_ev *e = &m->ev[m->n++];
	memset(e, 0, sizeof(*e));
	e->index = m->n - 1;
	return e;
}

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static bool rehash(struct lin_imp *m)
{
	size_t nc = m->hash_cap ? m->hash_cap * 2 : 1024;
	uint32_t *h = calloc(nc, sizeof(*h));
	if (!h)
		return false;
	for (size_t i = 0; i < m->hash_cap; i++) {
		uint32_t o = m->hash[i];
		if (!o)
			continue;
		const char *s = m->pool + o - 1;
		size_t j = fnv(s, strlen(s)) & (nc - 1);
		while (h[j])
			j = (j + 1) & (nc - 1);
		h[j] = o;
	}
	free(m->hash);
	m->hash = h;
	m->hash_cap = nc;
	return true;
}

uint32_t lin_imp_name(struct lin_imp *m, const char *s, size_t len)
{
	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	if (memchr(s, 0, len))
		len = strlen(s);
	if ((m->hash_n + 1) * 2 > m->hash_cap && !rehash(m))
		return 0;
	size_t j = fnv(s, len) & (m->hash_cap - 1);
	for (; m->hash[j]; j = (j + 1) & (m->hash_cap - 1)) {
		const char *t = m->pool + m->hash[j] - 1;
		if (strncmp(t, s, len) == 0 && t[len] == 0)
			return m->hash[j];
	}
	if (m->pool_n + len + 1 > m->pool_cap) {
		size_t nc = m->pool_cap ? m->pool_cap : 65536;
		while (nc < m->pool_n + len + 1)
			nc *= 2;
		if (nc > UINT32_MAX - 1)
			return 0;
		char *p = realloc(m->pool, nc);
		if (!p)
			return 0;
		m->pool = p;
		m->pool_cap = nc;
	}
	uint32_t o = (uint32_t)m->pool_n + 1;
	memcpy(m->pool + m->pool_n, s, len);
	m->pool[m->pool_n + len] = 0;
	m->pool_n += len + 1;
	m->hash[j] = o;
	m->hash_n++;
	return o;
}

const char *lin_imp_str(const struct lin_imp *m, uint32_t name)
{
	return name ? m->pool + name - 1 : "";
}

void lin_imp_free(struct lin_imp *m)
{
	free(m->ev);
	free(m->pool);
	free(m->hash);
	free(m->meta);
	memset(m, 0, sizeof(*m));
}

bool lin_imp_meta_add(struct lin_imp *m, uint64_t proc, uint64_t tid, const char *s, size_t len)
{
	if (m->nmeta == LIN_IMP_META_MAX)
		return true;
	if (m->nmeta == m->meta_cap) {
		size_t nc = m->meta_cap ? m->meta_cap * 2 : 64;
		struct lin_imp_meta *p = realloc(m->meta, nc * sizeof(*p));
		if (!p)
			return false;
		m->meta = p;
		m->meta_cap = nc;
	}
	uint32_t name = lin_imp_name(m, s, len);
	if (!name)
		return false;
	m->meta[m->nmeta] = (struct lin_imp_meta){ proc, tid, name, (uint32_t)m->nmeta };
	m->nmeta++;
	m->meta_sorted = false;
	return true;
}

const char *lin_imp_meta_name(const struct lin_imp *m, uint64_t proc, uint64_t tid)
{
	if (!m->meta_sorted)
		return NULL;
	size_t lo = 0, hi = m->nmeta; /* the first entry after (proc, tid) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct lin_imp_meta *e = &m->meta[mid];
		if (e->proc < proc || (e->proc == proc && e->tid <= tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the entry before it, when it matches, is the last one written: it wins, as in a
	 * trace viewer */
	if (lo && m->meta[lo - 1].proc == proc && m->meta[lo - 1].tid == tid)
		return lin_imp_str(m, m->meta[lo - 1].name);
	return NULL;
}

static int cmp_meta(const void *a, const void *b)
{
	const struct lin_imp_meta *x = a, *y = b;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->pad < y->pad ? -1 : x->pad > y->pad;
}

void lin_imp_meta_sort(struct lin_imp *m)
{
	if (m->nmeta > 1)
		qsort(m->meta, m->nmeta, sizeof(*m->meta), cmp_meta);
	m->meta_sorted = true;
}
