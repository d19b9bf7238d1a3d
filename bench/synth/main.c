/* SPDX-License-Identifier: MIT */
/*
 * main.c - lineage-synth's command line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "synth.h"

#define EX_USAGE 64

static const char usage_text[] =
	"NAME\n"
	"    lineage-synth - synthetic GPU handoff workloads with ground truth\n"
	"\n"
	"SYNOPSIS\n"
	"    lineage-synth --scenario NAME --strategy STRATEGY --seed N\n"
	"                  [--threads T] [--requests R] [--hops K] [--replays P] [--batch B]\n"
	"                  [--streams S] [--lanes L] [--otlp FILE] [--cupti sim|layer]\n"
	"                  [--driver-records none|distinct|shared] [--latency-timestamps]\n"
	"                  [--cause-truth FILE] [--sched-trace FILE] [--delay-us N]\n"
	"                  -o TRACE --truth TRUTH\n"
	"    lineage-synth --list-scenarios\n"
	"    lineage-synth --help\n"
	"\n"
	"DESCRIPTION\n"
	"    Runs a scenario on real threads against the lineage runtime, with a simulator in\n"
	"    place of the GPU and CUPTI: it keeps CUPTI's per-thread external-correlation stacks,\n"
	"    hands out correlationIds, and writes real CUPTI activity records that are decoded\n"
	"    through lin_cupti_attach_decode, or delivered by a stand-in for libcupti to the live\n"
	"    binding (--cupti layer; docs/simulator.md). The lineage trace goes to TRACE;\n"
	"    the ground truth (which requests each kernel, memcpy and memset truly serves, from\n"
	"    the workload's own bookkeeping) goes to TRUTH. Check one against the other with\n"
	"        lineage-validate --expect TRUTH TRACE\n"
	"\n"
	"    The same scenario and seed give the same work under every strategy; each writes,\n"
	"    in lineage's trace vocabulary, what one tool knows (docs/comparison.md):\n"
	"      epoch      lineage: tokens captured on the declaring thread, adopted by the\n"
	"                 worker, the epoch pushed on the thread that launches; graph tracker.\n"
	"      kineto     PyTorch profiler + Kineto: an op id (CUSTOM0) pushed around every GPU\n"
	"                 call on the thread that runs it; the op names the request only where\n"
	"                 the request's annotation is open on that thread.\n"
	"      nvtx       Nsight Systems: the NVTX ranges open on the launching thread (the\n"
	"                 request's range where it is open, else an op's), joined by time.\n"
	"      cuda-only  correlationId plus same-thread time containment in the request's host\n"
	"                 range; nothing on other threads.\n"
	"      manual     the request id carried in the task and pushed before each GPU call\n"
	"                 (one id per call: a batch gets its first request's).\n"
	"      manual-batch  manual, and for a batched launch a batch id pushed instead, logged\n"
	"                 with the batch's requests (a fan-in record).\n"
	"\n"
	"    One line is printed on stdout per process:\n"
	"      SYNTH scenario= strategy= seed= pid= launches= gpu_records= truth_labels=\n"
	"            host_ns_per_launch= host_ns_per_launch_mean= expect_late=\n"
	"            expect_dropped= open_records= batched_records= bare_replays= trace=\n"
	"            truth= cupti=\n"
	"    host_ns_per_launch is the host time the strategy's own calls took per launch\n"
	"    (median over tasks; _mean: over all launches). expect_late counts the GPU records\n"
	"    launched (strategy epoch) under a token whose epoch was retired before its adopt:\n"
	"    late work, joined to its request and counted late (docs/trace-format.md, \"Late\n"
	"    work\"). expect_dropped counts those that must be lost with cause\n"
	"    dropped_records. Of the other GPU records, batched_records serve several requests\n"
	"    and open_records serve one and were launched on a thread where it was open;\n"
	"    bare_replays are graph-replay records launched where no request was open.\n"
	"    The attr-* scenarios add one line:\n"
	"      ATTR scenario= cause_labels= attr_skipped= delay_ns=\n"
	"    attr_skipped counts targets left unlabelled because a delay that was not injected\n"
	"    (the pool's own handoff latency) exceeded a quarter of the injected one.\n"
	"\n"
	"OPTIONS\n"
	"    --scenario NAME    the workload (see --list-scenarios)\n"
	"    --strategy S       epoch, kineto, nvtx, cuda-only, manual or manual-batch\n"
	"    --seed N           seeds every choice (threads, order, buffer delivery, drops)\n"
	"    --threads T        pool threads, 2..64 (default 4): half submit, half work\n"
	"    --requests R       requests (default 48)\n"
	"    --hops K           chain-handoff hops (default 3)\n"
	"    --replays P        graph-* replays per captured graph (default 4)\n"
	"    --batch B          requests per batched launch, 1..64 (default 4)\n"
	"    --streams S        fanout-streams streams, 1..16 (default 4)\n"
	"    --lanes L          run L (1..4) copies of the workload at once, each on its own\n"
	"                       pool of T threads and its own 16 streams,\n"
	"                       against one runtime and one simulator (default 1).\n"
	"                       With L > 1 the threads really run concurrently, and ids and\n"
	"                       record order depend on the interleaving: only L = 1 is\n"
	"                       reproducible from the seed.\n"
	"    -o TRACE           the lineage trace to write\n"
	"    --truth TRUTH      the truth file to write\n"
	"    --otlp FILE        also stream the run as OpenTelemetry spans (OTLP/JSON lines) to\n"
	"                       FILE while it runs: the OTLP tap (lin_otlp_tap)\n"
	"    --cupti MODE       sim (default): the simulator decodes its buffers through\n"
	"                       lin_cupti_attach_decode; layer: the simulator drives a stand-in\n"
	"                       for libcupti's activity API (cupti_bind/testlayer) and the epoch\n"
	"                       strategy's runtime collects through its live CUPTI binding, the\n"
	"                       others through the workload's own CUPTI client (attach mode)\n"
	"    --driver-records R with --cupti layer: each runtime call makes a nested driver call\n"
	"                       with a correlation id of its own (distinct, the default), with\n"
	"                       the runtime call's (shared), or none\n"
	"    --api-edges-ns ENTER,EXIT\n"
	"                       a simulated runtime call's own work around CUPTI's timestamps:\n"
	"                       its API record starts ENTER ns after the launch bracket's host\n"
	"                       time and the call returns EXIT ns after the record's end\n"
	"                       (default 372,59: the least an H200 showed, docs/simulator.md;\n"
	"                       0,0: the record starts 1 ns into the bracket and the call\n"
	"                       returns at once, the tightest case)\n"
	"    --cupti-own-clock  with --cupti layer and --strategy epoch: the live binding leaves\n"
	"                       device times on CUPTI's own clock (LIN_CUPTI_OWN_CLOCK) and\n"
	"                       relates them to host time through the clock pairs it writes,\n"
	"                       as beside another tool that owns CUPTI's timestamps\n"
	"    --latency-timestamps\n"
	"                       kernel records carry CUPTI's queued and submitted times, as with\n"
	"                       cuptiActivityEnableLatencyTimestamps (--cupti sim only)\n"
	"    --cause-truth FILE the attr-* scenarios: write why each scored launch started late\n"
	"                       (the cause injected, its interval and size; a cause-truth file,\n"
	"                       docs/trace-format.md) to FILE; score it with\n"
	"                           lineage-explain --score FILE TRACE [SCHED]\n"
	"    --sched-trace FILE the attr-* scenarios: write the intervals the workload put a\n"
	"                       thread to sleep (attr-descheduled-blocked) as host_sched records\n"
	"                       to FILE, a trace of the same process (read it with TRACE): the\n"
	"                       input format of other collectors. The benchmark's evidence is\n"
	"                       the runtime's own collector (LINEAGE_SCHED_EVENTS=1)\n"
	"    --delay-us N       the attr-* scenarios: the injected delay, 100..1000000 us\n"
	"                       (default 2000)\n"
	"    --list-scenarios   print the scenarios and exit\n"
	"    -h, --help         print this help and exit\n"
	"\n"
	"    multi-process forks a second process that writes TRACE.2 and TRUTH.2 (and FILE.2\n"
	"    with --otlp); validate all four files together.\n"
	"\n"
	"EXIT STATUS\n"
	"    0 the run completed and both files were written; 1 a run-time failure (message on\n"
	"    stderr); 64 a usage error.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lineage-synth: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'lineage-synth --help'.\n");
	return EX_USAGE;
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_strategy(const char *s, enum synth_strategy *out)
{
	for (int i = 0; i < SYNTH_N_STRATEGIES; i++)
		if (strcmp(s, synth_strategy_names[i]) == 0) {
			*out = (enum synth_strategy)i;
			return 0;
		}
	return -1;
}

/* Index of @s in @names (@n of them), or -1. */
static int parse_name(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static void list_scenarios(void)
{
	for (size_t i = 0; i < synth_n_scenarios; i++)
		printf("%-24s %s\n", synth_scenarios[i].name, synth_scenarios[i].summary);
}

enum {
	O_SCEN = 256,
	O_STRAT,
	O_SEED,
	O_THREADS,
	O_REQ,
	O_HOPS,
	O_REPLAYS,
	O_BATCH,
	O_STREAMS,
	O_TRUTH,
	O_LIST,
	O_LANES,
	O_OTLP,
	O_CUPTI,
	O_DRIVER,
	O_LATENCY,
	O_OWN_CLOCK,
	O_API_EDGES,
	O_CAUSE,
	O_SCHED,
	O_DELAY
};

static const struct option longopts[] = {
	{ "scenario", required_argument, NULL, O_SCEN },
	{ "strategy", required_argument, NULL, O_STRAT },
	{ "seed", required_argument, NULL, O_SEED },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "requests", required_argument, NULL, O_REQ },
	{ "hops", required_argument, NULL, O_HOPS },
	{ "replays", required_argument, NULL, O_REPLAYS },
	{ "batch", required_argument, NULL, O_BATCH },
	{ "streams", required_argument, NULL, O_STREAMS },
	{ "truth", required_argument, NULL, O_TRUTH },
	{ "lanes", required_argument, NULL, O_LANES },
	{ "otlp", required_argument, NULL, O_OTLP },
	{ "cupti", required_argument, NULL, O_CUPTI },
	{ "driver-records", required_argument, NULL, O_DRIVER },
	{ "latency-timestamps", no_argument, NULL, O_LATENCY },
	{ "cupti-own-clock", no_argument, NULL, O_OWN_CLOCK },
	{ "api-edges-ns", required_argument, NULL, O_API_EDGES },
	{ "cause-truth", required_argument, NULL, O_CAUSE },
	{ "sched-trace", required_argument, NULL, O_SCHED },
	{ "delay-us", required_argument, NULL, O_DELAY },
	{ "list-scenarios", no_argument, NULL, O_LIST },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Parse into @o; returns -1 to continue, else an exit status. */
static int parse(int argc, char **argv, struct synth_opts *o, bool *seed_set, bool *driver_set)
{
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		uint32_t v = 0;
		int bad = 0;
		switch (c) {
		case O_SCEN: o->scenario = optarg; break;
		case O_STRAT:
			if (strcmp(optarg, "thread-local") == 0)
				return usage_error("strategy '%s' was removed: it modelled no real tool "
						   "(see kineto, nvtx, cuda-only, manual)",
						   optarg);
			bad = parse_strategy(optarg, &o->strategy);
			break;
		case O_SEED: {
			char *end;
			errno = 0;
			o->seed = strtoull(optarg, &end, 10);
			bad = errno || end == optarg || *end || *optarg == '-';
			*seed_set = true;
			break;
		}
		case O_THREADS: bad = parse_u32(optarg, 2, SYNTH_MAX_THREADS, &o->threads); break;
		case O_REQ: bad = parse_u32(optarg, 1, 1000000, &o->requests); break;
		case O_HOPS: bad = parse_u32(optarg, 1, 64, &o->hops); break;
		case O_REPLAYS: bad = parse_u32(optarg, 1, 100000, &o->replays); break;
		case O_BATCH: bad = parse_u32(optarg, 1, SYNTH_MAX_BATCH, &o->batch); break;
		case O_STREAMS:
			bad = parse_u32(optarg, 1, 16, &v);
			o->streams = v;
			break;
		case O_LANES: bad = parse_u32(optarg, 1, 4, &o->lanes); break;
		case 'o': o->trace = optarg; break;
		case O_TRUTH: o->truth = optarg; break;
		case O_OTLP: o->otlp = optarg; break;
		case O_CUPTI: {
			static const char *const m[] = { "sim", "layer" };
			int i = parse_name(optarg, m, 2);
			bad = i < 0;
			o->cupti = i < 0 ? LIN_SIM_ATTACH : (enum lin_sim_cupti)i;
			break;
		}
		case O_DRIVER: {
			static const char *const m[] = { "none", "distinct", "shared" };
			int i = parse_name(optarg, m, 3);
			bad = i < 0;
			o->driver = i < 0 ? LIN_SIM_DRIVER_NONE : (enum lin_sim_driver)i;
			*driver_set = true;
			break;
		}
		case O_LATENCY: o->latency = true; break;
		case O_OWN_CLOCK: o->own_clock = true; break;
		case O_API_EDGES: {
			unsigned a, b;
			char extra;
			if (sscanf(optarg, "%u,%u%c", &a, &b, &extra) != 2 || a > 1000000 || b > 1000000)
				return usage_error(
					"%s", "--api-edges-ns takes ENTER,EXIT (ns, each 0..1000000)");
			o->api_enter_ns = a;
			o->api_exit_ns = b;
			break;
		}
		case O_CAUSE: o->cause_truth = optarg; break;
		case O_SCHED: o->sched_trace = optarg; break;
		case O_DELAY:
			bad = parse_u32(optarg, 100, 1000000, &v);
			o->delay_ns = (uint64_t)v * 1000;
			break;
		case O_LIST: list_scenarios(); return 0;
		case 'h': fputs(usage_text, stdout); return 0;
		case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
		if (bad)
			return usage_error("bad value '%s'", optarg);
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return -1;
}

static int check_required(const struct synth_opts *o, bool seed_set, bool strategy_set, bool driver_set)
{
	if (!o->scenario)
		return usage_error("%s", "--scenario is required");
	if (!synth_find_scenario(o->scenario))
		return usage_error("unknown scenario '%s' (see --list-scenarios)", o->scenario);
	if (!strategy_set)
		return usage_error("%s", "--strategy is required");
	if (!seed_set)
		return usage_error("%s", "--seed is required");
	if (!o->trace || !o->truth)
		return usage_error("%s", "-o TRACE and --truth TRUTH are required");
	if (driver_set && o->cupti != LIN_SIM_LAYER)
		return usage_error("%s", "--driver-records needs --cupti layer");
	if (o->own_clock && (o->cupti != LIN_SIM_LAYER || o->strategy != SYNTH_EPOCH))
		return usage_error("%s", "--cupti-own-clock needs --cupti layer and --strategy epoch");
	if (o->latency && o->cupti != LIN_SIM_ATTACH)
		return usage_error("%s", "--latency-timestamps needs --cupti sim");
	bool attr = strncmp(o->scenario, "attr-", 5) == 0;
	if ((o->cause_truth || o->sched_trace) && !attr)
		return usage_error("%s", "--cause-truth and --sched-trace need an attr-* scenario");
	if (attr && (o->strategy != SYNTH_EPOCH || o->cupti != LIN_SIM_ATTACH || o->lanes > 1))
		return usage_error("%s", "the attr-* scenarios run with --strategy epoch, --cupti sim "
					 "and one lane");
	return -1;
}

/* multi-process: a forked second process (before any thread exists) runs the same
 * workload with seed+1 into TRACE.2/TRUTH.2; both simulators start correlationIds at 1. */
static int run_multi(const struct synth_opts *o, const struct synth_scenario *sc)
{
	char t2[4096], u2[4096], s2[4096];
	if (snprintf(t2, sizeof(t2), "%s.2", o->trace) >= (int)sizeof(t2) ||
	    snprintf(u2, sizeof(u2), "%s.2", o->truth) >= (int)sizeof(u2) ||
	    snprintf(s2, sizeof(s2), "%s.2", o->otlp ? o->otlp : "") >= (int)sizeof(s2)) {
		fprintf(stderr, "lineage-synth: path too long\n");
		return 1;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("lineage-synth: fork");
		return 1;
	}
	if (pid == 0) {
		struct synth_opts o2 = *o;
		o2.seed = o->seed + 1;
		o2.otlp = o->otlp ? s2 : NULL;
		o2.cause_truth = o2.sched_trace = NULL;
		_exit(synth_run_process(&o2, sc, t2, u2, 0));
	}
	int rc = synth_run_process(o, sc, o->trace, o->truth, 0);
	int status = 0;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "lineage-synth: the second process failed\n");
		rc = 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct synth_opts o = { .delay_ns = 2000000,
				.api_enter_ns = LIN_SIM_API_ENTER_NS,
				.api_exit_ns = LIN_SIM_API_EXIT_NS,
				.threads = 4,
				.requests = 48,
				.hops = 3,
				.replays = 4,
				.batch = 4,
				.streams = 4,
				.lanes = 1,
				.strategy = SYNTH_EPOCH };
	bool seed_set = false, strategy_set = false, driver_set = false;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--strategy") == 0 || strncmp(argv[i], "--strategy=", 11) == 0)
			strategy_set = true;
	int rc = parse(argc, argv, &o, &seed_set, &driver_set);
	if (rc >= 0)
		return rc;
	if (!driver_set)
		o.driver = LIN_SIM_DRIVER_DISTINCT;
	if ((rc = check_required(&o, seed_set, strategy_set, driver_set)) >= 0)
		return rc;
	const struct synth_scenario *sc = synth_find_scenario(o.scenario);
	if (strcmp(sc->name, "multi-process") == 0)
		return run_multi(&o, sc);
	uint32_t drop = strcmp(sc->name, "dropped-records") == 0 ? 100 : 0;
	return synth_run_process(&o, sc, o.trace, o.truth, drop);
}
