/* SPDX-License-Identifier: MIT */
/*
 * kineto.c - stream a trace-event JSON file (the PyTorch profiler's, Kineto, every schema
 * since 2020), plain or gzip, through yajl's SAX-style parser into the import model. Only
 * the fields the joins use are kept; the JSON text is never held (docs/importers.md,
 * "Kineto schema variants").
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
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
#define MAX_SILENT_CHUNKS 256 /* 16 MiB without a token: a runaway string */
#define NAME_BUF 4096
#define ARGNAME_BUF 256

struct kctx {
	struct lin_imp *m;
	yajl_handle h;
	int depth, ev_depth; /* ev_depth: depth of event maps (0: not found yet) */
	bool te_key;         /* the last top-level key was "traceEvents" */
	bool top_array;
	bool in_te; /* inside the event array */
	char key[24], akey[24];
	/* the event being read */
	char cat[LIN_IMP_CAT_LEN], ph[4];
	char name[NAME_BUF], argname[ARGNAME_BUF];
	size_t name_len, argname_len;
	bool has_cat, pid_ok, tid_ok, has_ts, has_dur, has_corr, has_ext, has_dev, has_stream;
	bool has_tid_stream; /* tid "stream N" */
	bool bad_time;
	const char *bad_type; /* ts or dur of a type that is not a time: which */
	uint64_t pid, tid, corr, ext, dev, stream, tid_stream;
	int64_t ts, dur;
	uint64_t base, ev_off, events, callbacks;
	uint64_t err_at;      /* an error about one event: its offset + 1 */
	uint64_t read_events; /* events of a category read (op, launch, GPU) */
	bool started;         /* the first bytes were fed (byte order mark checked) */
	char err[256];
};

static void copy_key(char *dst, size_t n, const unsigned char *s, size_t len)
{
	if (len >= n)
		len = n - 1; /* longer keys are none we use */
	memcpy(dst, s, len);
	dst[len] = 0;
}

static uint64_t offset_now(struct kctx *k)
{
	size_t c = yajl_get_bytes_consumed(k->h);
	return k->base + (c ? c - 1 : 0);
}

static void reset_event(struct kctx *k)
{
	k->cat[0] = k->ph[0] = 0;
	k->name_len = k->argname_len = 0;
	k->has_cat = k->pid_ok = k->tid_ok = k->has_ts = k->has_dur = k->has_corr = false;
	k->has_ext = k->has_dev = k->has_stream = k->bad_time = k->has_tid_stream = false;
	k->bad_type = NULL;
	k->stream = k->tid_stream = 0;
	k->key[0] = 0;
	k->ev_off = offset_now(k);
}

/* ts or dur given a value that is neither a number nor a string (null, bool, object,
 * array): remembered, the event is refused if its category is read. */
static void time_type(struct kctx *k, int depth, const char *type)
{
	if (k->in_te && depth == k->ev_depth && (!strcmp(k->key, "ts") || !strcmp(k->key, "dur")))
		k->bad_type = type;
}

static int on_start_map(void *ctx)
{
	struct kctx *k = ctx;
	k->callbacks++;
	time_type(k, k->depth, "an object");
	if (++k->depth > MAX_DEPTH) {
		snprintf(k->err, sizeof(k->err), "nesting deeper than %d levels", MAX_DEPTH);
		return 0;
	}
	if (k->in_te && k->depth == k->ev_depth)
		reset_event(k);
	k->akey[0] = 0;
	return 1;
}

static int on_start_array(void *ctx)
{
	struct kctx *k = ctx;
	k->callbacks++;
	time_type(k, k->depth, "an array");
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

/* A non-negative decimal integer (JSON number or string of digits); false otherwise. */
static bool parse_uint(const char *s, size_t len, uint64_t *out)
{
	if (!len || len > 20)
		return false;
	uint64_t u = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (u > (UINT64_MAX - d) / 10)
			return false;
		u = u * 10 + d;
	}
	*out = u;
	return true;
}

/* A thread id: an integer, negative ones kept as their two's complement (only compared). */
static bool parse_tid(const char *s, size_t len, uint64_t *out)
{
	if (len && s[0] == '-') {
		uint64_t u;
		if (!parse_uint(s + 1, len - 1, &u) || u > (uint64_t)INT64_MAX)
			return false;
		*out = (uint64_t) - (int64_t)u;
		return true;
	}
	return parse_uint(s, len, out);
}

static void event_number(struct kctx *k, const char *s, size_t len)
{
	if (!strcmp(k->key, "pid")) {
		k->pid_ok = parse_uint(s, len, &k->pid);
	} else if (!strcmp(k->key, "tid")) {
		k->tid_ok = parse_tid(s, len, &k->tid);
	} else if (!strcmp(k->key, "ts")) {
		k->has_ts = lin_imp_us_to_ns(s, len, &k->ts);
		k->bad_time |= !k->has_ts;
	} else if (!strcmp(k->key, "dur")) {
		k->has_dur = lin_imp_us_to_ns(s, len, &k->dur);
		k->bad_time |= !k->has_dur;
	}
}

static void arg_number(struct kctx *k, const char *s, size_t len)
{
	uint64_t u;
	if (!parse_uint(s, len, &u))
		return; /* no id we use is negative or fractional */
	if (!strcmp(k->akey, "correlation")) {
		k->corr = u;
		k->has_corr = true;
	} else if (!strcmp(k->akey, "External id") || !strcmp(k->akey, "external id")) {
		k->ext = u; /* 0: unset (Kineto wrote 0 for "no op") */
		k->has_ext = u != 0;
	} else if (!strcmp(k->akey, "device")) {
		k->dev = u;
		k->has_dev = true;
	} else if (!strcmp(k->akey, "stream")) {
		k->stream = u;
		k->has_stream = true;
	}
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (k->in_te && k->depth == k->ev_depth)
		event_number(k, s, len);
	else if (in_args(k))
		arg_number(k, s, len);
	return 1;
}

/* pid/tid written as strings: "24572" (host threads, 2020-21 Kineto), "stream 7" (GPU). */
static void event_id_string(struct kctx *k, const char *s, size_t len)
{
	if (!strcmp(k->key, "pid")) {
		k->pid_ok = parse_uint(s, len, &k->pid);
	} else if (!strcmp(k->key, "tid")) {
		k->tid_ok = parse_tid(s, len, &k->tid);
		if (!k->tid_ok && len > 7 && !memcmp(s, "stream ", 7))
			k->has_tid_stream = parse_uint(s + 7, len - 7, &k->tid_stream);
	}
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct kctx *k = ctx;
	k->callbacks++;
	if (in_args(k) && !strcmp(k->akey, "name")) {
		k->argname_len = len < ARGNAME_BUF ? len : ARGNAME_BUF;
		memcpy(k->argname, s, k->argname_len);
		return 1;
	}
	if (!k->in_te || k->depth != k->ev_depth)
		return 1;
	if (!strcmp(k->key, "cat")) {
		copy_key(k->cat, sizeof(k->cat), s, len);
		k->has_cat = true;
	} else if (!strcmp(k->key, "ph")) {
		copy_key(k->ph, sizeof(k->ph), s, len);
	} else if (!strcmp(k->key, "name")) {
		k->name_len = len < NAME_BUF ? len : NAME_BUF;
		memcpy(k->name, s, k->name_len);
	} else if (!strcmp(k->key, "ts") || !strcmp(k->key, "dur")) {
		/* a decimal number written as a string ("50"): read as the number; any other
		 * string is not a time (docs/importers.md) */
		int64_t t;
		if (lin_imp_us_to_ns((const char *)s, len, &t))
			event_number(k, (const char *)s, len);
		else
			k->bad_type = "a string that is not a decimal number (or does not fit)";
	} else {
		event_id_string(k, (const char *)s, len);
	}
	return 1;
}

static int on_other(void *ctx)
{
	((struct kctx *)ctx)->callbacks++;
	return 1;
}
static int on_bool(void *ctx, int b)
{
	(void)b;
	time_type(ctx, ((struct kctx *)ctx)->depth, "a boolean");
	return on_other(ctx);
}
static int on_null(void *ctx)
{
	time_type(ctx, ((struct kctx *)ctx)->depth, "null");
	return on_other(ctx);
}

/*
 * The categories read, every spelling Kineto has used (docs/importers.md): 2020 to mid-2021
 * wrote Operator, Runtime, Kernel, Memcpy, Memset; later builds the lower-case names;
 * cuda_driver since 2023; roctracer files HIP calls under cuda_runtime.
 */
static int kind_of(const char *cat)
{
	static const struct {
		const char *cat;
		int kind;
	} map[] = {
		{ "cpu_op", LIN_IMP_OP },          { "user_annotation", LIN_IMP_OP },
		{ "Operator", LIN_IMP_OP },        { "cuda_runtime", LIN_IMP_LAUNCH },
		{ "cuda_driver", LIN_IMP_LAUNCH }, { "Runtime", LIN_IMP_LAUNCH },
		{ "kernel", LIN_IMP_KERNEL },      { "gpu_memcpy", LIN_IMP_MEMCPY },
		{ "gpu_memset", LIN_IMP_MEMSET },  { "Kernel", LIN_IMP_KERNEL },
		{ "Memcpy", LIN_IMP_MEMCPY },      { "Memset", LIN_IMP_MEMSET },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(cat, map[i].cat))
			return map[i].kind;
	return -1;
}

static void tally(struct kctx *k, int kind)
{
	struct lin_imp *m = k->m;
	if (!k->has_cat) {
		m->uncategorised++;
		return;
	}
	if (!strcmp(k->cat, "cuda_profiler_range"))
		m->profiler_ranges++;
	for (unsigned i = 0; i < m->ncats; i++) {
		if (!strcmp(m->cats[i].name, k->cat)) {
			m->cats[i].n++;
			return;
		}
	}
	if (m->ncats == LIN_IMP_CATS) {
		m->cats_other++;
		return;
	}
	struct lin_imp_cat *c = &m->cats[m->ncats++];
	snprintf(c->name, sizeof(c->name), "%s", k->cat);
	c->n = 1;
	c->kind = kind;
}

static void graph_flag(struct kctx *k, struct lin_imp_ev *e)
{
	static const char g[] = "GraphLaunch"; /* cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch */
	for (size_t i = 0; i + sizeof(g) - 1 <= k->name_len; i++)
		if (!memcmp(k->name + i, g, sizeof(g) - 1))
			e->flags |= LIN_IMP_GRAPH;
}

static int metadata(struct kctx *k)
{
	bool proc = k->name_len == 12 && !memcmp(k->name, "process_name", 12);
	bool thr = k->name_len == 11 && !memcmp(k->name, "thread_name", 11);
	if (!(proc || thr) || !k->pid_ok || !k->argname_len || (thr && !k->tid_ok))
		return 1;
	if (!lin_imp_meta_add(k->m, k->pid, thr ? k->tid : LIN_NIL, k->argname, k->argname_len)) {
		snprintf(k->err, sizeof(k->err), "out of memory");
		return 0;
	}
	return 1;
}

static int keep_event(struct kctx *k, int kind)
{
	struct lin_imp_ev *e = lin_imp_push(k->m);
	if (!e) {
		snprintf(k->err, sizeof(k->err), "out of memory");
		return 0;
	}
	e->index = k->events - 1;
	e->off = k->ev_off;
	e->kind = (uint8_t)kind;
	e->ts = k->ts;
	int64_t d = k->has_dur && k->dur > 0 ? k->dur : 0;
	e->end = k->ts > INT64_MAX - d ? INT64_MAX : k->ts + d;
	e->corr = k->corr;
	e->ext = k->ext;
	e->flags = (uint8_t)((k->has_corr ? LIN_IMP_HAS_CORR : 0) | (k->has_ext ? LIN_IMP_HAS_EXT : 0));
	if (kind >= LIN_IMP_KERNEL) {
		e->dev = (uint16_t)(k->has_dev ? k->dev : k->pid_ok ? k->pid : 0);
		/* The stream: args.stream, else the tid ("stream 7", or 7 as Kineto writes a GPU
		 * event's tid). */
		e->tid = k->has_stream ? k->stream : k->tid_ok ? k->tid : k->tid_stream;
		if (!k->has_stream && !k->tid_ok && !k->has_tid_stream)
			e->flags |= LIN_IMP_NO_STREAM;
	} else {
		e->proc = k->pid;
		e->tid = k->tid;
	}
	if (kind == LIN_IMP_LAUNCH)
		graph_flag(k, e);
	e->name = k->name_len ? lin_imp_name(k->m, k->name, k->name_len) : 0;
	return 1;
}

static int end_event(struct kctx *k)
{
	k->events++;
	k->m->records = k->events;
	int kind = k->has_cat ? kind_of(k->cat) : -1;
	tally(k, kind);
	k->read_events += kind >= 0;
	if (!strcmp(k->ph, "M"))
		return metadata(k);
	unsigned long long n = (unsigned long long)(k->events - 1);
	if (kind >= LIN_IMP_KERNEL && strcmp(k->ph, "X") != 0) {
		/* a GPU record this reader cannot place in time: never dropped silently */
		k->err_at = k->ev_off + 1;
		snprintf(k->err, sizeof(k->err),
			 "event #%llu (cat %s): a GPU event with %s%s%s; "
			 "only complete events (\"ph\": \"X\") are read",
			 n, k->cat, k->ph[0] ? "\"ph\": \"" : "no \"ph\"", k->ph, k->ph[0] ? "\"" : "");
		return 0;
	}
	if (kind < 0 || strcmp(k->ph, "X") != 0)
		return 1;
	if (k->bad_type || k->bad_time) {
		k->err_at = k->ev_off + 1;
		if (k->bad_type)
			snprintf(k->err, sizeof(k->err),
				 "event #%llu (cat %s): ts or dur is %s, not "
				 "a time in microseconds",
				 n, k->cat, k->bad_type);
		else
			snprintf(k->err, sizeof(k->err),
				 "event #%llu (cat %s): ts or dur is not a "
				 "time in microseconds that fits 64-bit nanoseconds",
				 n, k->cat);
		return 0;
	}
	if (!k->has_ts && kind >= LIN_IMP_KERNEL) {
		k->err_at = k->ev_off + 1;
		snprintf(k->err, sizeof(k->err), "event #%llu (cat %s): a GPU event without \"ts\"",
			 n, k->cat);
		return 0;
	}
	if (!k->has_ts)
		return 1;
	if (kind <= LIN_IMP_LAUNCH && (!k->pid_ok || !k->tid_ok))
		return 1; /* host events need an integer pid and tid */
	if (kind == LIN_IMP_LAUNCH && !k->has_corr)
		return 1;
	return keep_event(k, kind);
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

static const yajl_callbacks callbacks = {
	on_null,      on_bool, NULL,       NULL,           on_number,    on_string,
	on_start_map, on_key,  on_end_map, on_start_array, on_end_array,
};

static int fail(struct lin_jfile *f, uint64_t off, bool trunc, const char *msg)
{
	snprintf(f->err, sizeof(f->err), "%s", msg);
	f->err_off = off;
	f->truncated = trunc;
	return -1;
}

/* Feed @n bytes (n == 0: the end of the input). 0, or -1 with the error in f. */
static int feed(struct kctx *k, struct lin_jfile *f, const unsigned char *buf, size_t n, unsigned *silent)
{
	uint64_t seen = k->callbacks;
	if (!k->started && n > 0) {
		/* A leading UTF-8 byte order mark (detection accepts it; yajl does not): skipped,
		 * and counted in the offsets, which stay those of the file's bytes. */
		k->started = true;
		if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf) {
			buf += 3;
			n -= 3;
			k->base += 3;
			if (n == 0)
				return 0;
		}
	}
	yajl_status s = n > 0 ? yajl_parse(k->h, buf, n) : yajl_complete_parse(k->h);
	if (s != yajl_status_ok) {
		uint64_t off = k->base + (n > 0 ? yajl_get_bytes_consumed(k->h) : 0);
		if (k->err[0])
			return fail(f, k->err_at ? k->err_at - 1 : off, false, k->err);
		unsigned char *e = yajl_get_error(k->h, 0, n > 0 ? buf : NULL, n);
		char msg[400];
		snprintf(msg, sizeof(msg), "malformed JSON: %s", e ? (const char *)e : "parse error");
		if (e)
			yajl_free_error(k->h, e);
		for (char *p = msg; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return fail(f, off, n == 0, msg);
	}
	k->base += n;
	*silent = n == 0 || k->callbacks != seen ? 0 : *silent + 1;
	if (*silent > MAX_SILENT_CHUNKS)
		return fail(f, k->base, false, "no JSON token ends within 16 MiB");
	return 0;
}

/* "cpu_op (12), ac2g (40), ..." into buf: what a file held. */
static void list_cats(const struct lin_imp *m, char *buf, size_t n)
{
	size_t w = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < m->ncats && w < n; i++)
		w += (size_t)snprintf(buf + w, n - w, "%s%s (%llu)", i ? ", " : "", m->cats[i].name,
				      (unsigned long long)m->cats[i].n);
	if (m->cats_other && w < n)
		w += (size_t)snprintf(buf + w, n - w, ", %llu more events in other categories",
				      (unsigned long long)m->cats_other);
	if (m->uncategorised && w < n)
		snprintf(buf + w, n - w, "%s%llu events without a category", w ? "; " : "",
			 (unsigned long long)m->uncategorised);
}

/* After the last byte: a file that holds no event of a category read is not a trace this
 * reader understands (exit 2), never an empty pass. */
static int check_end(struct kctx *k, struct lin_jfile *f)
{
	if (!k->ev_depth)
		return fail(f, 0, false, "not a trace-event JSON file: no traceEvents array");
	const struct lin_imp *m = k->m;
	if (k->read_events) /* counted, not looked up in the (capped) category table */
		return 0;
	char cats[400], msg[480];
	list_cats(m, cats, sizeof(cats));
	if (!k->events)
		snprintf(msg, sizeof(msg),
			 "no GPU activity among categories: none (no event object "
			 "in the event array)");
	else
		snprintf(msg, sizeof(msg), "no GPU activity among categories: %s", cats);
	return fail(f, 0, false, msg);
}

static struct kctx *kctx_new(struct lin_imp *m, struct lin_jfile *f)
{
	m->gpu_proc_is_file = true;
	struct kctx *k = calloc(1, sizeof(*k));
	if (!k) {
		fail(f, 0, false, "out of memory");
		return NULL;
	}
	k->m = m;
	k->h = yajl_alloc(&callbacks, NULL, k);
	if (!k->h) {
		free(k);
		fail(f, 0, false, "out of memory");
		return NULL;
	}
	return k;
}

static void kctx_free(struct kctx *k)
{
	if (!k)
		return;
	yajl_free(k->h);
	free(k);
}

int lin_imp_kineto_mem(struct lin_imp *m, const void *data, size_t n, struct lin_jfile *f)
{
	f->size = n;
	struct kctx *k = kctx_new(m, f);
	if (!k)
		return -1;
	unsigned silent = 0;
	int rc = 0;
	const unsigned char *p = data;
	for (size_t off = 0; off < n && !rc; off += CHUNK)
		rc = feed(k, f, p + off, n - off < CHUNK ? n - off : CHUNK, &silent);
	if (!rc)
		rc = feed(k, f, NULL, 0, &silent);
	if (!rc)
		rc = check_end(k, f);
	kctx_free(k);
	return rc;
}

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
static const char *src_error(src_t s, bool *trunc)
{
	(void)s;
	*trunc = false;
	return NULL;
}
#endif

/* One chunk from the file into the parser: 1 more to come, 0 end of input, -1 error. */
static int read_chunk(struct kctx *k, struct lin_jfile *f, src_t src, unsigned char *buf, unsigned *silent)
{
	long n = src_read(src, buf, CHUNK);
	bool trunc;
	const char *zerr = src_error(src, &trunc);
	if (n == -2 && k->base == 0)
		return fail(f, 0, false, "gzip-compressed, and this build has no zlib");
	if (n == -2)
		n = CHUNK;
	if (n < 0 || (zerr && !trunc)) {
		char msg[300];
		snprintf(msg, sizeof(msg), "read error (decompressed byte): %s",
			 zerr ? zerr : "I/O error");
		return fail(f, k->base, false, msg);
	}
	if (trunc) {
		if (n > 0)
			yajl_parse(k->h, buf, (size_t)n);
		return fail(f, k->base + (uint64_t)(n > 0 ? n : 0), true,
			    "truncated gzip stream (unexpected end of compressed data; offset in "
			    "decompressed bytes)");
	}
	if (feed(k, f, buf, (size_t)n, silent))
		return -1;
	return n > 0;
}

int lin_imp_kineto(struct lin_imp *m, const char *path, struct lin_jfile *f)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		char why[160];
		snprintf(why, sizeof(why), "cannot open: %s", strerror(errno));
		return fail(f, 0, false, why);
	}
	if (!S_ISREG(st.st_mode))
		return fail(f, 0, false, lin_imp_not_regular(st.st_mode));
	f->size = (uint64_t)st.st_size;
	src_t src = src_open(path);
	if (!src) {
		char why[160];
		snprintf(why, sizeof(why), "cannot open: %s", errno ? strerror(errno) : "out of memory");
		return fail(f, 0, false, why);
	}
	struct kctx *k = kctx_new(m, f);
	unsigned char *buf = malloc(CHUNK);
	int rc = -1;
	if (!k || !buf) {
		if (k)
			fail(f, 0, false, "out of memory");
		goto out;
	}
	unsigned silent = 0;
	int r;
	while ((r = read_chunk(k, f, src, buf, &silent)) > 0)
		;
	rc = r < 0 ? -1 : check_end(k, f);
out:
	kctx_free(k);
	free(buf);
	src_close(src);
	return rc;
}

#else /* !LIN_HAVE_YAJL */

int lin_imp_kineto(struct lin_imp *m, const char *path, struct lin_jfile *f)
{
	(void)m;
	(void)path;
	snprintf(f->err, sizeof(f->err), "this build has no JSON parser (libyajl)");
	return -1;
}

int lin_imp_kineto_mem(struct lin_imp *m, const void *data, size_t n, struct lin_jfile *f)
{
	(void)m;
	(void)data;
	(void)n;
	snprintf(f->err, sizeof(f->err), "this build has no JSON parser (libyajl)");
	return -1;
}

#endif
