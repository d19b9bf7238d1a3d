/* SPDX-License-Identifier: MIT */
/*
 * ostate.h - the OTLP stream's state, shared by its two halves: otlp_stream.c (decoding,
 * the stream thread, expiry, the public calls) and spans.c (host records in time order,
 * the spans they make, the document writer). Internal to otlp/.
 */
#ifndef LIN_OTLP_OSTATE_H
#define LIN_OTLP_OSTATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "lineage/trace_format.h"
#include "lineage/w3c.h"
#include "otlp_emit.h"
#include "otlp_stream.h"
#include "vtab.h"

struct sreq {
	uint64_t begin, parent, user_id, name_sid, rparent;
	uint8_t trace[16];
	uint32_t tid;
	bool remote;
};

struct sepoch {
	uint64_t begin, name_sid, exec, ordinal;
	uint64_t parent_epoch, first_req; /* its parent span's (span_model.h), LIN_NIL: none */
	uint8_t trace[16];
	uint64_t *reqs;        /* [nreq] the requests it serves, owned (one allocation with:) */
	uint8_t (*rtrace)[16]; /* [nreq] their traces */
	uint32_t nreq, version, reissues, tid;
};

struct sadopt {
	uint64_t begin, target, capture_tid;
	uint8_t trace[16]; /* the target's, when known */
	uint32_t kind;
	bool known; /* the target is a span (open, or retired within the retention time) */
};

struct scorr {                /* external correlation -> epoch */
	uint64_t epoch, seen; /* epoch LIN_NIL: several epochs (ambiguous) */
};

struct sdone { /* a retired epoch or ended request, for GPU records that come later */
	uint64_t t;
	uint8_t trace[16];
};

/* The fields a host record that makes spans keeps in the heap (the most of any). */
#define LIN_OS_HOST_FIELDS 9

/* A host record waiting for its turn: host records are processed in host-time order
 * (the writer drains thread by thread, so the byte stream is ordered per thread only).
 * It keeps the decoded record's fields as the reader gave them, read by name when it is
 * rebuilt (spans.c). */
struct srec {
	uint64_t t, seq;                /* ordering key: host time, then decode order */
	uint64_t f[LIN_OS_HOST_FIELDS]; /* struct lin_rec's f[], nil and nfields */
	uint32_t nil, nfields;
	uint64_t *reqs; /* epoch_declare: its requests, owned */
	uint32_t nreq;
	uint8_t type;
	char str[40]; /* misuse: its cause */
};

struct sgpu {
	uint64_t offset, corr, start, end, graph, node, name_sid, bytes, arrived;
	uint32_t device, context, stream;
	uint8_t kind;
};

struct sevent {
	uint64_t t, a, b, c;
	const char *name; /* static */
	char cause[40];
	uint8_t what; /* EV_MISUSE, EV_LOSS */
};

enum { EV_MISUSE, EV_LOSS };

struct lin_ostream {
	const lin_runtime *rt;
	int fd;
	lin_trace_write_fn write;
	void *user;
	char service[128];
	struct lin_oj_clock clk; /* to Unix time: unix_off from the header's start_unix_ns (else
				  * read at open), the clock map of the clock records read
				  * so far (finished after each) */
	_Atomic int failed;
	/* bytes fed (under the runtime's output lock), taken by the next tick; in_mu also
	 * guards the stream thread's hand-over fields below */
	pthread_mutex_t in_mu;
	uint8_t *in;
	uint8_t *hdr; /* a copy of the first piece fed (the header), for a skip that takes it */
	size_t hlen;
	size_t ilen, icap, ioff; /* in[ioff..ilen) waits */
	uint64_t in_pos;         /* trace offset of in[ioff] */
	bool resync;             /* bytes were skipped: decoding restarts at in_pos */
	uint64_t dropped_bytes;  /* fed while the backlog was full: not decoded */
	/* the stream's own thread (threaded streams) */
	pthread_t thr;
	pthread_cond_t work_cv, done_cv;
	bool threaded, running, stop;
	uint64_t want_wm, kicks, done_kicks;
	/* decoding: one tick at a time */
	pthread_mutex_t tick_mu;
	uint8_t *pend;
	size_t plen, pcap;
	uint64_t base;         /* trace offset of pend[0] */
	struct lin_reader *rd; /* trace/'s reader, in stream mode */
	struct lin_rec *rec;   /* the record it decodes into (large: on the heap) */
	bool have_header;
	/* the process */
	char host[256], backend[32];
	uint64_t pid, key, ext_kind, tmin, tmax;
	uint64_t now; /* the latest tick's watermark (host ns) */
	/* open state */
	struct lin_vtab reqs, epochs, adopts, strs, corrs, replays, done, lastt;
	struct lin_vec pending, events, heap;
	uint64_t seq;
	uint64_t events_over;
	/* host events dropped: by the dropped records of source 1, by the trace_end records,
	 * and the difference already shown as a loss event */
	uint64_t host_dropped, end_dropped, end_shown;
	struct lin_oj w; /* the document being built */
	struct lin_ostream_stats st;
};

/* spans.c */
void lin_os_add_event(struct lin_ostream *s, uint8_t what, uint64_t t, const char *cause,
		      size_t clen, uint64_t a, uint64_t b, uint64_t c);
void lin_os_doc_flush(struct lin_ostream *s);
void lin_os_drain_heap(struct lin_ostream *s, uint64_t watermark);
void lin_os_fail(struct lin_ostream *s, int err, const char *what);
void *lin_os_get(struct lin_ostream *s, struct lin_vtab *t, uint64_t k0, uint64_t k1);
void lin_os_heap_push(struct lin_ostream *s, const struct srec *r);
void lin_os_process(struct lin_ostream *s, struct srec *r);
void lin_os_resource(struct lin_oj *w, int res, void *user);
void lin_os_seen(struct lin_ostream *s, uint64_t t);
int lin_os_sink(const char *doc, size_t len, void *user);
void lin_os_write_adopt(struct lin_ostream *s, uint64_t tid, uint64_t depth, const struct sadopt *a,
			uint64_t end, bool closed);
/* Epoch @e as a span (a graph replay's exec and ordinal taken into @e first). */
void lin_os_write_epoch(struct lin_ostream *s, uint64_t id, struct sepoch *e, uint64_t end, bool open);
void lin_os_write_gpu(struct lin_ostream *s, const struct sgpu *g, const uint8_t *trace,
		      uint64_t epoch, const char *join);
void lin_os_write_open(struct lin_ostream *s);
void lin_os_write_process(struct lin_ostream *s);
void lin_os_write_request(struct lin_ostream *s, uint64_t id, const struct sreq *q, uint64_t end,
			  bool open);

#endif
