/* SPDX-License-Identifier: MIT */
/*
 * quickstart.c - the README's example: a request prepared on one thread, launched on a
 * pool thread. Build: cc quickstart.c $(pkg-config --cflags --libs lineage) -pthread
 */
#include <pthread.h>
#include <stdio.h>

#include <lineage.h>

struct task {
	lin_runtime *rt;
	lin_token tok; /* travels with the task: 32 bytes, by value */
};

static void *worker(void *arg)
{
	struct task *t = arg;
	lin_scope scope;
	int err = lin_token_adopt(t->rt, &t->tok, &scope); /* the epoch is current here */
	if (err) {
		fprintf(stderr, "adopt: %s\n", lin_strerror(err));
		return NULL;
	}
	lin_launch l;
	lin_launch_begin(t->rt, "saxpy", &l); /* pushes the epoch as external correlation */
	/* saxpy<<<grid, block, 0, stream>>>(...); */
	lin_launch_end(t->rt, &l);
	lin_scope_exit(t->rt, &scope);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "quickstart.lintrace";
	struct lin_runtime_opts o = { .sz = sizeof(o),
				      .trace_path = path,
				      .backend = LIN_BACKEND_CUPTI }; /* host-only without a GPU */
	lin_runtime *rt;
	int err = lin_runtime_create(&o, &rt);
	if (err) {
		fprintf(stderr, "lin_runtime_create: %s\n", lin_strerror(err));
		return 1;
	}
	/* Submitting thread: declare the work, then capture it into the task. */
	uint64_t req, epoch;
	lin_scope rs, es;
	struct lin_request_opts ro = { .sz = sizeof(ro), .name = "POST /generate" };
	lin_request_begin(rt, &ro, &req);
	lin_scope_enter(rt, req, &rs);
	lin_epoch_declare(rt, NULL, &epoch); /* minted before any thread launches it */
	lin_scope_enter(rt, epoch, &es);
	struct task t = { .rt = rt };
	lin_token_capture(rt, &t.tok);
	lin_scope_exit(rt, &es);
	lin_scope_exit(rt, &rs);

	pthread_t th; /* stands in for the framework's thread pool */
	pthread_create(&th, NULL, worker, &t);
	pthread_join(th, NULL);

	lin_epoch_retire(rt, epoch);
	lin_request_end(rt, req);
	lin_runtime_free(rt); /* flushes and closes the trace */
	printf("wrote %s\n", path);
	return 0;
}
