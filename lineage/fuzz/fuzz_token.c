/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for hostile tokens: the text parser and the binary check in
 * lin_token_adopt. Whatever the bytes, parse and adopt must return an error or a token
 * that round-trips, never crash, and a forged binary token must never adopt.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lineage.h>

static lin_runtime *rt;
static uint64_t live_req;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	struct lin_runtime_opts o = { .sz = sizeof(o), .flags = LIN_RT_NO_WRITER_THREAD };
	if (lin_runtime_create(&o, &rt) || lin_request_begin(rt, NULL, &live_req))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Text form. */
	char text[256];
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
	memcpy(text, data, n);
	text[n] = 0;
	lin_token tok;
	if (lin_token_parse(text, &tok) == 0) {
		char back[LIN_TOKEN_TEXT_MAX];
		lin_token again;
		if (lin_token_format(&tok, back, sizeof(back)) || lin_token_parse(back, &again) ||
		    again.id != tok.id || again.version != tok.version || again.slot != tok.slot ||
		    again.tag != tok.tag)
			abort(); /* a parsed token must format and parse back to itself */
		lin_scope s;
		if (lin_token_adopt(rt, &tok, &s) == 0)
			lin_scope_exit(rt, &s);
	}
	/* Binary form: 32 arbitrary bytes as a token. */
	if (size >= sizeof(lin_token)) {
		memcpy(&tok, data, sizeof(tok));
		lin_scope s;
		if (lin_token_adopt(rt, &tok, &s) == 0) {
			/* Only a token naming the live request with its tag can adopt. */
			if (tok.id != live_req)
				abort();
			lin_scope_exit(rt, &s);
		}
	}
	lin_runtime_flush(rt);
	return 0;
}
