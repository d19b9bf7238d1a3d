/* SPDX-License-Identifier: MIT */
/*
 * kineto.c - stream a PyTorch profiler (Kineto) trace-event JSON file, plain or gzip,
 * through yajl's SAX-style parser into the import model. Only the fields the joins use
 * are kept; the JSON text is never held (docs/importers.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imp.h"

#ifdef LIN_HAVE_YAJL
#include <yajl/yajl_parse.h>
#ifdef LIN_HAVE_ZLIB
#include <zlib.h>
#endif

#define CHUNK (64 * 1024)
#define MAX_DEPTH 64
#define MAX_SILENT_CHUNKS 256          /* 16 MiB without a token: a runaway string */
#define NAME_BUF 4096

struct kctx {
	struct lin_imp *m;
	yajl_handle h;
	int depth, ev_depth;            /* ev_depth: depth of event maps (0: not found yet) */
	bool te_key;                    /* the last top-level key was "traceEvents" */
	bool top_array;
	bool in_te;                     /* inside the event array */
	char key[24], akey[24];
	/* the event being read */
	char cat[24], ph[4];
	char name[NAME_BUF];
	size_t name_len;
	bool pid_ok, tid_ok, has_ts, has_dur, has_corr, has_ext, has_dev;
	uint64_t pid, tid, corr, ext, dev, stream;
	double ts, dur;
	uint64_t base, ev_off, events, callbacks;
	bool oom;
	char err[256];
};

static void copy_key(char *dst, size_t n, const unsigned char *s, size_t len)
{
	if (len >= n)
		len = n - 1;          /* longer keys are none we use */
	memcpy(dst, s, len);
	dst[len] = 0;
}

static uint64_t offset_now(struct kctx *k)
{
	size_t c = yajl_get_bytes_consumed(k->h);
	return k->base + (c ? c - 1 : 0);
}

static int on_start_map(void *ctx)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (++k->depth > MAX_DEPTH) {
		snprintf(k->err, sizeof(k->err), "nesting deeper than %d levels", MAX_DEPTH);
		return 0;
	}
	if (k->in_te && k->depth == k->ev_depth) {
		k->cat[0] = k->ph[0] = 0;
		k->name_len = 0;
		k->pid_ok = k->tid_ok = k->has_ts = k->has_dur = k->has_corr = k->has_ext = false;
		k->has_dev = false;
		k->stream = 0;
		k->key[0] = 0;
		k->ev_off = offset_now(k);
	}
	k->akey[0] = 0;
	return 1;
}

static int on_start_array(void *ctx)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (++k->depth > MAX_DEPTH) {
		snprintf(k->err, sizeof(k->err), "nesting deeper than %d levels", MAX_DEPTH);
		return 0;
	}
	if (k->depth == 1) {
		k->top_array = k->in_te = true;
		k->ev_depth = 2;
	} else if (k->depth == 2 && k->te_key && !k->top_array) {
		k->in_te = true;
		k->ev_depth = 3;
	}
	return 1;
}

static int on_end_array(void *ctx)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (k->depth == k->ev_depth - 1)
		k->in_te = false;
	k->depth--;
	return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (k->depth == 1 && !k->top_array)
		k->te_key = len == 11 && memcmp(s, "traceEvents", 11) == 0;
	else if (k->in_te && k->depth == k->ev_depth)
		copy_key(k->key, sizeof(k->key), s, len);
	else if (k->in_te && k->depth == k->ev_depth + 1)
		copy_key(k->akey, sizeof(k->akey), s, len);
	return 1;
}

static bool in_args(const struct kctx *k)
{
	return k->in_te && k->depth == k->ev_depth + 1 && strcmp(k->key, "args") == 0;
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct kctx *k = ctx;
	k->callbacks++;
	char buf[64];
	if (len >= sizeof(buf))
		return 1;             /* no field we use is that long */
	memcpy(buf, s, len);
	buf[len] = 0;
	bool integral = !strpbrk(buf, ".eE") && buf[0] != '-';
	double d = strtod(buf, NULL);
	uint64_t u = integral ? strtoull(buf, NULL, 10) : (d >= 0 && d < 1.8e19 ? (uint64_t)d : 0);
	if (k->in_te && k->depth == k->ev_depth) {
		if (!strcmp(k->key, "pid"))
			k->pid = u, k->pid_ok = d >= 0;
		else if (!strcmp(k->key, "tid"))
			k->tid = u, k->tid_ok = true;
		else if (!strcmp(k->key, "ts"))
			k->ts = d, k->has_ts = true;
		else if (!strcmp(k->key, "dur"))
			k->dur = d, k->has_dur = true;
	} else if (in_args(k)) {
		if (!strcmp(k->akey, "correlation"))
			k->corr = u, k->has_corr = true;
		else if (!strcmp(k->akey, "External id"))
			k->ext = u, k->has_ext = true;
		else if (!strcmp(k->akey, "device"))
			k->dev = u, k->has_dev = true;
		else if (!strcmp(k->akey, "stream"))
			k->stream = u;
	}
	return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (!k->in_te || k->depth != k->ev_depth)
		return 1;
	if (!strcmp(k->key, "cat"))
		copy_key(k->cat, sizeof(k->cat), s, len);
	else if (!strcmp(k->key, "ph"))
		copy_key(k->ph, sizeof(k->ph), s, len);
	else if (!strcmp(k->key, "name")) {
		k->name_len = len < NAME_BUF ? len : NAME_BUF;
		memcpy(k->name, s, k->name_len);
	}
	return 1;
}

static int on_other(void *ctx)
{
	((struct kctx *)ctx)->callbacks++;
	return 1;
}
static int on_bool(void *ctx, int b) { (void)b; return on_other(ctx); }

static int kind_of(const char *cat)
{
	static const struct { const char *cat; int kind; } map[] = {
		{ "cpu_op", LIN_IMP_OP }, { "user_annotation", LIN_IMP_OP },
		{ "cuda_runtime", LIN_IMP_LAUNCH }, { "cuda_driver", LIN_IMP_LAUNCH },
		{ "kernel", LIN_IMP_KERNEL }, { "gpu_memcpy", LIN_IMP_MEMCPY },
		{ "gpu_memset", LIN_IMP_MEMSET },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(cat, map[i].cat))
			return map[i].kind;
	return -1;
}

static int64_t to_ns(double us)
{
	double ns = us * 1000.0;
	return ns > 9.2e18 ? INT64_MAX : ns < -9.2e18 ? INT64_MIN : (int64_t)(ns + (ns < 0 ? -0.5 : 0.5));
}

static int end_event(struct kctx *k)
{
	k->events++;
	k->m->records = k->events;
	int kind = kind_of(k->cat);
	if (kind < 0 || strcmp(k->ph, "X") != 0 || !k->has_ts)
		return 1;
	if (kind <= LIN_IMP_LAUNCH && (!k->pid_ok || !k->tid_ok))
		return 1;             /* host events need a numeric pid and tid */
	if (kind == LIN_IMP_LAUNCH && !k->has_corr)
		return 1;
	struct lin_imp_ev *e = lin_imp_push(k->m);
	if (!e) {
		k->oom = true;
		snprintf(k->err, sizeof(k->err), "out of memory");
		return 0;
	}
	e->index = k->events - 1;
	e->off = k->ev_off;
	e->kind = (uint8_t)kind;
	e->ts = to_ns(k->ts);
	e->end = to_ns(k->ts + (k->has_dur && k->dur > 0 ? k->dur : 0));
	e->corr = k->corr;
	e->ext = k->ext;
	e->flags = (uint8_t)((k->has_corr ? LIN_IMP_HAS_CORR : 0) | (k->has_ext ? LIN_IMP_HAS_EXT : 0));
	if (kind >= LIN_IMP_KERNEL) {
		e->dev = (uint16_t)(k->has_dev ? k->dev : k->pid);
		e->tid = k->stream;
	} else {
		e->proc = k->pid;
		e->tid = k->tid;
	}
	if (kind == LIN_IMP_LAUNCH) {
		static const char g[] = "GraphLaunch";
		for (size_t i = 0; i + sizeof(g) - 1 <= k->name_len; i++)
			if (!memcmp(k->name + i, g, sizeof(g) - 1))
				e->flags |= LIN_IMP_GRAPH;
	}
	e->name = k->name_len ? lin_imp_name(k->m, k->name, k->name_len) : 0;
	return 1;
}

static int on_end_map(void *ctx)
{
	struct kctx *k = ctx;
	k->callbacks++;
	int rc = 1;
	if (k->in_te && k->depth == k->ev_depth)
		rc = end_event(k);
	k->depth--;
	return rc;
}

static int on_null(void *ctx) { return on_other(ctx); }

static const yajl_callbacks callbacks = {
	on_null, on_bool, NULL, NULL, on_number, on_string, on_start_map, on_key, on_end_map,
	on_start_array, on_end_array,
};

#ifdef LIN_HAVE_ZLIB
typedef gzFile src_t;
static src_t src_open(const char *p) { return gzopen(p, "rb"); }
static long src_read(src_t s, unsigned char *b, size_t n) { return gzread(s, b, (unsigned)n); }
static void src_close(src_t s) { gzclose(s); }
static const char *src_error(src_t s, bool *trunc)
{
	int e;
	const char *msg = gzerror(s, &e);
	*trunc = e == Z_BUF_ERROR;
	return e == Z_OK ? NULL : msg;
}
#else
typedef FILE *src_t;
static src_t src_open(const char *p) { return fopen(p, "rb"); }
static long src_read(src_t s, unsigned char *b, size_t n)
{
	size_t r = fread(b, 1, n, s);
	if (r == 0 && ferror(s))
		return -1;
	if (r >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return -2;
	return (long)r;
}
static void src_close(src_t s) { fclose(s); }
static const char *src_error(src_t s, bool *trunc) { (void)s; *trunc = false; return NULL; }
#endif

static int fail(struct lin_vfile *f, uint64_t off, bool trunc, const char *msg)
{
	snprintf(f->err, sizeof(f->err), "%s", msg);
	f->err_off = off;
	f->truncated = trunc;
	return -1;
}

int lin_imp_kineto(struct lin_imp *m, const char *path, struct lin_vfile *f)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return fail(f, 0, false, "cannot open: not a readable regular file");
	f->size = (uint64_t)st.st_size;
	m->gpu_proc_is_file = true;
	src_t src = src_open(path);
	if (!src)
		return fail(f, 0, false, "cannot open");
	struct kctx *k = calloc(1, sizeof(*k));
	unsigned char *buf = malloc(CHUNK);
	int rc = 0;
	if (!k || !buf) {
		rc = fail(f, 0, false, "out of memory");
		goto out;
	}
	k->m = m;
	k->h = yajl_alloc(&callbacks, NULL, k);
	if (!k->h) {
		rc = fail(f, 0, false, "out of memory");
		goto out;
	}
	unsigned silent = 0;
	for (;;) {
		long n = src_read(src, buf, CHUNK);
		bool trunc;
		const char *zerr = src_error(src, &trunc);
		if (n == -2 && k->base == 0) {
			rc = fail(f, 0, false, "gzip-compressed, and this build has no zlib");
			goto out;
		}
		if (n == -2)
			n = CHUNK;
		if (n < 0 || (zerr && !trunc)) {
			char msg[300];
			snprintf(msg, sizeof(msg), "read error (decompressed byte): %s",
				 zerr ? zerr : "I/O error");
			rc = fail(f, k->base, false, msg);
			goto out;
		}
		if (trunc) {
			if (n > 0)
				yajl_parse(k->h, buf, (size_t)n);
			rc = fail(f, k->base + (uint64_t)(n > 0 ? n : 0), true,
				  "truncated gzip stream (unexpected end of compressed data; "
				  "offset in decompressed bytes)");
			goto out;
		}
		uint64_t seen = k->callbacks;
		yajl_status s = n > 0 ? yajl_parse(k->h, buf, (size_t)n) : yajl_complete_parse(k->h);
		if (s != yajl_status_ok) {
			uint64_t off = k->base + (n > 0 ? yajl_get_bytes_consumed(k->h) : 0);
			if (k->err[0]) {
				rc = fail(f, off, false, k->err);
			} else {
				unsigned char *e = yajl_get_error(k->h, 0, n > 0 ? buf : NULL,
								  n > 0 ? (size_t)n : 0);
				char msg[400];
				snprintf(msg, sizeof(msg), "malformed JSON: %s",
					 e ? (const char *)e : "parse error");
				if (e)
					yajl_free_error(k->h, e);
				for (char *p = msg; *p; p++)
					if (*p == '\n')
						*p = ' ';
				rc = fail(f, off, n == 0, msg);
			}
			goto out;
		}
		if (n == 0)
			break;
		k->base += (uint64_t)n;
		silent = k->callbacks == seen ? silent + 1 : 0;
		if (silent > MAX_SILENT_CHUNKS) {
			rc = fail(f, k->base, false, "no JSON token ends within 16 MiB");
			goto out;
		}
	}
	if (!k->ev_depth)
		rc = fail(f, 0, false, "not a trace-event JSON file: no traceEvents array");
out:
	if (k && k->h)
		yajl_free(k->h);
	free(k);
	free(buf);
	src_close(src);
	return rc;
}

#else  /* !LIN_HAVE_YAJL */

int lin_imp_kineto(struct lin_imp *m, const char *path, struct lin_vfile *f)
{
	(void)m;
	(void)path;
	snprintf(f->err, sizeof(f->err), "this build has no JSON parser (libyajl)");
	return -1;
}

#endif
