/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>

#include "rt_fixture.h"

struct handoff {
	lin_runtime *rt;
	lin_token tok;
	int adopt_rc;
	uint64_t cur_id;
	uint32_t cur_kind;
};

static void *worker(void *arg)
{
	struct handoff *h = arg;
	lin_scope s;
	h->adopt_rc = lin_token_adopt(h->rt, &h->tok, &s);
	if (h->adopt_rc == 0) {
		lin_scope_current(h->rt, &h->cur_kind, &h->cur_id, NULL);
		lin_scope_exit(h->rt, &s);
	}
	return NULL;
}

static int run_worker(struct handoff *h)
{
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, worker, h), 0);
	pthread_join(th, NULL);
	return h->adopt_rc;
}

Test(tokens, capture_without_context_fails_and_zeroes)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_token tok;
	memset(&tok, 0xab, sizeof(tok));
	cr_assert_eq(lin_token_capture(f.rt, &tok), -LIN_ENOCONTEXT);
	lin_scope s;
	cr_assert_eq(lin_token_adopt(f.rt, &tok, &s), -LIN_EBADTOKEN, "a zeroed token never adopts");
	cr_assert_eq(lin_token_capture(f.rt, NULL), -EINVAL);
	rtfix_fini(&f);
}

Test(tokens, handoff_to_another_thread_carries_the_epoch)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, es;
	rtfix_request(&f, &rs);
	uint64_t ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	cr_assert_eq(lin_scope_enter(f.rt, ep, &es), 0);
	struct handoff h = { .rt = f.rt };
	cr_assert_eq(lin_token_capture(f.rt, &h.tok), 0);
	cr_assert_eq(run_worker(&h), 0);
	cr_assert_eq(h.cur_id, ep);
	cr_assert_eq(h.cur_kind, LIN_TARGET_EPOCH);
	lin_scope_exit(f.rt, &es);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *cap = trace_nth(t, LIN_REC_TOKEN_CAPTURE, 0);
	cr_assert_not_null(cap);
	cr_assert_eq(rec_u(cap, 4), ep);
	uint64_t cap_tid = rec_u(cap, 2), cap_seq = rec_u(cap, 6);
	/* The worker's adopt is the third adopt record (request and epoch entered first). */
	const msgpack_object *ad = NULL;
	for (size_t k = 0; (ad = trace_nth(t, LIN_REC_TOKEN_ADOPT, k)); k++)
		if (rec_u(ad, 2) != cap_tid)
			break;
	cr_assert_not_null(ad, "an adopt on the worker thread was recorded");
	cr_assert_eq(rec_u(ad, 4), ep);
	cr_assert_eq(rec_u(ad, 6), cap_tid, "adopt names the capturing thread");
	cr_assert_eq(rec_u(ad, 7), cap_seq, "and the capture");
	cr_assert_eq(rec_u(ad, 8), 1, "outermost scope on the worker");
	cr_assert_geq(rec_u(ad, 1), rec_u(cap, 1), "adopt after capture on the host clock");
	rtfix_fini(&f);
	LIN_TEST_CHECK_LEAKS();
}

static uint64_t stat_late_adopts(lin_runtime *rt)
{
	struct lin_runtime_stats st = { .sz = sizeof(st) };
	cr_assert_eq(lin_runtime_get_stats(rt, &st), 0);
	return st.late_adopts;
}

/* The token_adopt record (field 4: the target) of @id, and its late field (9). */
static uint64_t adopt_late(struct trace *t, uint64_t id)
{
	const msgpack_object *ad;
	for (size_t k = 0; (ad = trace_nth(t, LIN_REC_TOKEN_ADOPT, k)); k++)
		if (rec_u(ad, 4) == id)
			return rec_u(ad, 9);
	cr_assert_fail("no adopt of %llu", (unsigned long long)id);
	return 0;
}

/* A retired epoch's token (its slot reused by a new epoch meanwhile) adopts on the worker as
 * late work: the scope is the old epoch's, the record says late (after retire), no misuse. */
Test(tokens, retired_epochs_token_adopts_late)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs;
	rtfix_request(&f, &rs);
	uint64_t ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	struct handoff h = { .rt = f.rt };
	cr_assert_eq(lin_token_make(f.rt, ep, &h.tok), 0);
	cr_assert_eq(lin_epoch_retire(f.rt, ep), 0);
	uint64_t ep2;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep2), 0);
	cr_assert_eq(run_worker(&h), 0);
	cr_assert_eq(h.cur_id, ep, "the late scope is the old epoch's");
	cr_assert_eq(h.cur_kind, LIN_TARGET_EPOCH);
	cr_assert_eq(stat_late_adopts(f.rt), 1);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(adopt_late(t, ep), LIN_LATE_ENDED);
	cr_assert_null(trace_nth(t, LIN_REC_MISUSE, 0), "late work is no misuse");
	rtfix_fini(&f);
}

/* A re-issued epoch's old token adopts late (after reissue); the new one is current. */
Test(tokens, reissued_epochs_old_token_adopts_late)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, s;
	rtfix_request(&f, &rs);
	uint64_t ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	lin_token old, fresh;
	cr_assert_eq(lin_token_make(f.rt, ep, &old), 0);
	cr_assert_eq(lin_epoch_reissue(f.rt, ep, LIN_REISSUE_REPLAY, NULL), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &old, &s), 0);
	uint32_t v = 0;
	cr_assert_eq(lin_scope_current(f.rt, NULL, NULL, &v), 0);
	cr_assert_eq(v, 1, "the old version's scope");
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	cr_assert_eq(lin_token_make(f.rt, ep, &fresh), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &fresh, &s), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	cr_assert_eq(stat_late_adopts(f.rt), 1, "the fresh token is not late");
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *a1 = trace_nth(t, LIN_REC_TOKEN_ADOPT, 1);
	const msgpack_object *a2 = trace_nth(t, LIN_REC_TOKEN_ADOPT, 2);
	cr_assert(a1 && a2);
	cr_assert_eq(rec_u(a1, 9), LIN_LATE_REISSUED);
	cr_assert_eq(rec_u(a2, 9), LIN_LATE_NONE);
	rtfix_fini(&f);
}

Test(tokens, ended_requests_token_adopts_late)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req;
	lin_token tok;
	lin_scope s;
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	cr_assert_eq(lin_token_make(f.rt, req, &tok), 0);
	cr_assert_eq(lin_request_end(f.rt, req), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &tok, &s), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	struct trace *t = rtfix_close(&f);
	cr_assert_eq(adopt_late(t, req), LIN_LATE_ENDED);
	rtfix_fini(&f);
}

/* What cannot be checked is not adopted late: a stale token that came as text (it may be
 * another process's): -LIN_ESTALE_TOKEN and a stale_token misuse record. */
Test(tokens, stale_text_tokens_are_not_adopted)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	lin_scope rs, s;
	rtfix_request(&f, &rs);
	uint64_t ep;
	cr_assert_eq(lin_epoch_declare(f.rt, NULL, &ep), 0);
	lin_token tok, parsed;
	char text[LIN_TOKEN_TEXT_MAX];
	cr_assert_eq(lin_token_make(f.rt, ep, &tok), 0);
	cr_assert_eq(lin_token_format(&tok, text, sizeof(text)), 0);
	cr_assert_eq(lin_token_parse(text, &parsed), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &parsed, &s), 0, "current: adopted");
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	cr_assert_eq(lin_epoch_retire(f.rt, ep), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &parsed, &s), -LIN_ESTALE_TOKEN);
	cr_assert_eq(stat_late_adopts(f.rt), 0);
	lin_scope_exit(f.rt, &rs);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *m = trace_nth(t, LIN_REC_MISUSE, 0);
	cr_assert_not_null(m);
	const msgpack_object *cause = rec_f(m, 3);
	cr_assert_eq(strncmp(cause->via.str.ptr, "stale_token", cause->via.str.size), 0);
	cr_assert_eq(rec_u(m, 5), ep);
	rtfix_fini(&f);
}

Test(tokens, corrupted_token_fails_integrity_check)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req;
	lin_token tok, bad;
	lin_scope s;
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	cr_assert_eq(lin_token_make(f.rt, req, &tok), 0);
	/* Flip each bit of the identity fields and the tag: every one must be caught. */
	const size_t idfields[] = { offsetof(lin_token, id), offsetof(lin_token, version),
				    offsetof(lin_token, slot), offsetof(lin_token, tag) };
	for (size_t k = 0; k < 4; k++) {
		for (int bit = 0; bit < 32; bit++) {
			bad = tok;
			((unsigned char *)&bad)[idfields[k] + bit / 8] ^=
				(unsigned char)(1u << (bit % 8));
			cr_assert_eq(lin_token_adopt(f.rt, &bad, &s), -LIN_EBADTOKEN,
				     "field %zu bit %d", k, bit);
		}
	}
	cr_assert_eq(lin_token_adopt(f.rt, &tok, &s), 0);
	lin_scope_exit(f.rt, &s);
	rtfix_fini(&f);
}

Test(tokens, token_of_another_runtime_is_foreign)
{
	struct rtfix a, b;
	rtfix_open(&a, LIN_RT_NO_WRITER_THREAD, NULL);
	rtfix_open(&b, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req;
	lin_token tok;
	lin_scope s;
	cr_assert_eq(lin_request_begin(a.rt, NULL, &req), 0);
	cr_assert_eq(lin_token_make(a.rt, req, &tok), 0);
	cr_assert_eq(lin_token_adopt(b.rt, &tok, &s), -LIN_EFOREIGN);
	rtfix_fini(&a);
	rtfix_fini(&b);
}

/* A binary token of another runtime of this process, live or freed, is foreign, never
 * adopted (late or not) as this runtime's: no two runtimes of a process share a tag until
 * 65,535 have been made. 1,000 runtimes made and freed in turn: with random 16-bit tags two
 * would collide with probability 1 - 0.0005. */
Test(tokens, runtimes_of_one_process_never_share_a_tag)
{
	static uint8_t seen[65536];
	memset(seen, 0, sizeof(seen));
	lin_token keep;
	for (int i = 0; i < 1000; i++) {
		struct rtfix f;
		rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
		uint64_t req;
		lin_token tok;
		cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
		cr_assert_eq(lin_token_make(f.rt, req, &tok), 0);
		cr_assert(!seen[tok.rt], "runtime %d got tag %u again", i, (unsigned)tok.rt);
		seen[tok.rt] = 1;
		if (i == 0) {
			cr_assert_eq(lin_request_end(f.rt, req), 0);
			keep = tok; /* the first runtime's token, its request ended */
		} else {
			lin_scope s;
			cr_assert_eq(lin_token_adopt(f.rt, &keep, &s), -LIN_EFOREIGN,
				     "a freed runtime's token is foreign, not late");
		}
		rtfix_fini(&f);
	}
}

/* Without capture records (LIN_RT_NO_CAPTURE_EVENTS) a token names no capture, so its
 * adopt never names one the trace does not have (adopt_without_capture). */
Test(tokens, without_capture_records_a_token_names_no_capture)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD | LIN_RT_NO_CAPTURE_EVENTS, NULL);
	uint64_t req;
	lin_scope s, a;
	lin_token tok;
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	cr_assert_eq(lin_scope_enter(f.rt, req, &s), 0);
	cr_assert_eq(lin_token_capture(f.rt, &tok), 0);
	cr_assert_eq(tok.capture_tid, 0);
	cr_assert_eq(tok.capture_seq, 0);
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);
	cr_assert_eq(lin_token_adopt(f.rt, &tok, &a), 0);
	cr_assert_eq(lin_scope_exit(f.rt, &a), 0);
	rtfix_fini(&f);
}

/* Two runtimes of one process (a library and its application) never name the same request
 * or epoch: ids are unique in the process, so their traces read together stay apart. */
Test(tokens, two_runtimes_of_a_process_never_share_an_id)
{
	struct rtfix a, b;
	rtfix_open(&a, LIN_RT_NO_WRITER_THREAD, NULL);
	rtfix_open(&b, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t ra, rb;
	cr_assert_eq(lin_request_begin(a.rt, NULL, &ra), 0);
	cr_assert_eq(lin_request_begin(b.rt, NULL, &rb), 0);
	cr_assert_neq(ra, rb);
	cr_assert_lt(ra | rb, 1ull << 62, "below the late bits");
	rtfix_fini(&a);
	rtfix_fini(&b);
}

Test(tokens, text_form_round_trips)
{
	struct rtfix f;
	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	uint64_t req;
	lin_token tok, back;
	lin_scope s;
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	cr_assert_eq(lin_token_make(f.rt, req, &tok), 0);
	char text[LIN_TOKEN_TEXT_MAX];
	cr_assert_eq(lin_token_format(&tok, text, sizeof(text)), 0);
	cr_assert_eq(strncmp(text, "lin1.", 5), 0);
	cr_assert_eq(lin_token_format(&tok, text, 10), -ENOSPC);
	cr_assert_eq(lin_token_format(&tok, text, sizeof(text)), 0);
	cr_assert_eq(lin_token_parse(text, &back), 0);
	cr_assert_eq(back.id, tok.id);
	cr_assert_eq(back.version, tok.version);
	cr_assert_eq(lin_token_adopt(f.rt, &back, &s), 0, "a parsed token adopts");
	lin_scope_exit(f.rt, &s);
	struct trace *t = rtfix_close(&f);
	const msgpack_object *ad = trace_nth(t, LIN_REC_TOKEN_ADOPT, 0);
	cr_assert(rec_nil(ad, 6) && rec_nil(ad, 7), "a parsed token has no local capture");
	rtfix_fini(&f);
}

Test(tokens, text_parser_rejects_malformed_input)
{
	lin_token tok;
	const char *bad[] = {
		"",
		"lin1",
		"lin1.",
		"lin2.0000000000000001.1.1.1.1.00000000",
		"lin1.1.1.1.1.1.00000000",                        /* id not 16 digits */
		"lin1.0000000000000001.1.1.1.1.0000000",          /* tag not 8 digits */
		"lin1.0000000000000001.1.1.1.1.00000000x",        /* trailing garbage */
		"lin1.0000000000000001..1.1.1.00000000",          /* empty field */
		"lin1.0000000000000001.1.1.1.1",                  /* missing field */
		"lin1.000000000000000G.1.1.1.1.00000000",         /* not hex */
		"lin1.0000000000000001.1.1.1.1.0000000A",         /* upper case */
		"lin1.0000000000000001.123456789.1.1.1.00000000", /* version > 32 bits */
		"lin1.0000000000000001.1.1.12345.1.00000000",     /* rt > 16 bits */
		" lin1.0000000000000001.1.1.1.1.00000000",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(lin_token_parse(bad[i], &tok), -EINVAL, "accepted '%s'", bad[i]);
	/* Well-formed but forged: wrong tag. */
	cr_assert_eq(lin_token_parse("lin1.0000000000000001.1.1.1.1.00000000", &tok), -LIN_EBADTOKEN);
	cr_assert_eq(lin_token_parse(NULL, &tok), -EINVAL);
}
