/* SPDX-License-Identifier: MIT */
/*
 * test_names.c - the 0.1-0.3 names lin_lookup, lin_token_for and lin_current, deprecated
 * in 0.4, still compile, link and answer as lin_entity_lookup, lin_token_make and
 * lin_scope_current do (CHANGELOG.md). The deprecation warning itself is checked by the
 * ctests deprecated_names_warn / deprecated_names_silenced (tests/headers).
 */
#include "rt_fixture.h"

/* Callers of the old names get a warning; this test is such a caller on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

Test(names, old_names_answer_as_the_new_ones)
{
	struct rtfix f;
	uint64_t req, ep, id_old = 0, id_new = 0, got_old = 0, got_new = 0;
	uint32_t kind_old = 0, kind_new = 0, ver_old = 0, ver_new = 0;
	struct lin_entity_info info_old = { .sz = sizeof(info_old) };
	struct lin_entity_info info_new = { .sz = sizeof(info_new) };
	lin_token tok_old, tok_new;
	lin_scope s;

	rtfix_open(&f, LIN_RT_NO_WRITER_THREAD, NULL);
	cr_assert_eq(lin_request_begin(f.rt, NULL, &req), 0);
	struct lin_epoch_opts eo = { .sz = sizeof(eo), .requests = &req, .n_requests = 1 };
	cr_assert_eq(lin_epoch_declare(f.rt, &eo, &ep), 0);

	cr_assert_eq(lin_lookup(f.rt, ep, &info_old, &got_old, 1), 0);
	cr_assert_eq(lin_entity_lookup(f.rt, ep, &info_new, &got_new, 1), 0);
	cr_assert_eq(memcmp(&info_old, &info_new, sizeof(info_old)), 0);
	cr_assert_eq(got_old, req);
	cr_assert_eq(got_new, req);
	cr_assert_eq(lin_lookup(f.rt, ep + 1000, NULL, NULL, 0), -LIN_ENOTFOUND);

	cr_assert_eq(lin_token_for(f.rt, ep, &tok_old), 0);
	cr_assert_eq(lin_token_make(f.rt, ep, &tok_new), 0);
	cr_assert_eq(memcmp(&tok_old, &tok_new, sizeof(tok_old)), 0, "same token, same fields");
	cr_assert_eq(lin_token_for(f.rt, ep + 1000, &tok_old), -LIN_ENOTFOUND);

	cr_assert_eq(lin_current(f.rt, &kind_old, &id_old, &ver_old), -LIN_ENOCONTEXT);
	cr_assert_eq(lin_token_adopt(f.rt, &tok_old, &s), 0);
	cr_assert_eq(lin_current(f.rt, &kind_old, &id_old, &ver_old), 0);
	cr_assert_eq(lin_scope_current(f.rt, &kind_new, &id_new, &ver_new), 0);
	cr_assert_eq(kind_old, LIN_TARGET_EPOCH);
	cr_assert_eq(id_old, ep);
	cr_assert_eq(kind_new, kind_old);
	cr_assert_eq(id_new, id_old);
	cr_assert_eq(ver_new, ver_old);
	cr_assert_eq(lin_scope_exit(f.rt, &s), 0);

	cr_assert_eq(lin_epoch_retire(f.rt, ep), 0);
	cr_assert_eq(lin_request_end(f.rt, req), 0);
	rtfix_close(&f);
	rtfix_fini(&f);
}
