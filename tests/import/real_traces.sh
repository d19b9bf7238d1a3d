#!/bin/sh
# Run lineage-validate --from kineto|nsys on every trace of the real-trace directory beside
# the clone (../shared/realtraces, passed as REALTRACES_DIR) and
# check the counts derived by reading the traces independently (tests/import/reference.py,
# Python's json/gzip/sqlite3 and brute-force joins; see docs/importers.md), plus counts
# any reader gets from the files directly (event and row counts, noted per trace).
# Usage: real_traces.sh BIN REALTRACES_DIR
BIN=$1 DIR=$2
. "$(dirname "$0")/lib.sh"
if [ ! -d "$DIR" ]; then
	echo "SKIP: $DIR is absent (the real traces live in ../shared/realtraces beside the clone)"
	exit 77
fi
run() { "$BIN" --from "$1" --json --max-findings 0 "$DIR/$2"; }
auto() { "$BIN" --json --max-findings 0 "$DIR/$1"; }      # the kind read from the content
have() {
	[ -f "$DIR/$1" ] && return 0
	echo "FAIL: $DIR/$1 missing"
	fails=$((fails + 1))
	return 1
}

# Independent counts: gpu_records = events with cat kernel, gpu_memcpy, gpu_memset (and the
# 2020-21 spellings Kernel, Memcpy, Memset), e.g.
#   jq '[.traceEvents[]|select(.ph=="X" and ((.cat // "")|test("^(kernel|gpu_memcpy|gpu_memset|Kernel|Memcpy|Memset)$")))]|length'
# and rows of CUPTI_ACTIVITY_KIND_KERNEL + _MEMCPY + _MEMSET (sqlite3 'select count(*)');
# records = len(traceEvents). The outcomes are those of tests/import/reference.py.
f=tracelens_h100_bert_small.json.gz
if have $f; then
	j=$(run kineto $f); expect_eq "$f exit" $? 0
	# every launch carries the External id of the cpu_op that encloses it on its thread
	expect_keys $f "$j" exit_code=0 records=2551 gpu_records=61 joined_observed=61 \
		joined_inferred=0 lost=0 ambiguous=0 file_errors=0 op=61 api_call=0 none=0
fi
f=kineto_tbplugin_2021schema_gpu_metrics_input.json
if have $f; then
	j=$(auto $f); expect_eq "$f exit" $? 0
	# the 2021 schema: Kernel/Runtime/Operator/Memcpy, tid strings, "external id": 30
	# kernels and 2 memcpys, each linked to its Operator by the lower-case "external id"
	expect_keys $f "$j" exit_code=0 records=340 gpu_records=32 joined_observed=32 \
		joined_inferred=0 lost=0 ambiguous=0 launches=42 op=32
fi
f=param_dlrm_worker1_step_12.pt.trace.json
if have $f; then
	j=$(auto $f)
	# External id == correlation on every runtime event (writer bug), naming no other op:
	# joined by time; 64 GPU records have correlations below the first cuda_runtime
	# correlation (41615): launched before the trace window.
	expect_keys $f "$j" exit_code=1 records=3424 gpu_records=326 joined_observed=0 \
		joined_inferred=262 same_thread_time_containment=262 ambiguous=0 \
		before_trace_start=64 lost=64 op=262 none=64
fi
f=hta_alexnet_critical_path.json.gz
if have $f; then
	j=$(run kineto $f); expect_eq "$f exit" $? 0
	# External id == correlation; 17 of those ids name an unrelated cpu_op that does not
	# hold the launch (seconds away, or another op): joined by time under the fallback
	expect_keys $f "$j" exit_code=0 records=1408 gpu_records=98 joined_observed=0 \
		joined_inferred=98 same_thread_time_containment=81 \
		external_id_is_correlation_fallback=17 lost=0 ambiguous=0 op=98
fi
f=tracelens_rocm_vllm_decode_full_graph_replay.json.gz
if have $f; then
	j=$(auto $f); expect_eq "$f exit" $? 0
	# one hipGraphLaunch (correlation 505113, no External id) replays 421 kernels; it lies
	# inside the step annotation on its thread: joined to the step, node level unknown
	expect_keys $f "$j" exit_code=0 records=1993 gpu_records=434 joined_observed=13 \
		joined_inferred=421 graph_launch_enclosing_op=421 ambiguous=0 lost=0 op=434 notes=1
	expect_eq "$f graph note" "$(printf '%s' "$("$BIN" --json "$DIR/$f")" |
		grep -c '"cause":"graph_node_unknown","file":"[^"]*","offset":[0-9]*,"record":[0-9]*,"ids":{"correlation":505113,"pid":851,"tid":851,"gpu_records":421')" 1
fi

# Nsight Systems. gpu_records = rows of CUPTI_ACTIVITY_KIND_KERNEL + _MEMCPY + _MEMSET.
f=pipit_nsys2022_saxpy_mpi_cuda.sqlite
if have $f; then
	j=$(run nsys $f)
	# 5 kernels + 15 memcpys; the memcpys and setup launches lie outside the NVTX ranges
	expect_keys $f "$j" exit_code=1 gpu_records=20 joined_inferred=5 lost=15 \
		no_enclosing_op=15 ambiguous=0 notes=0 launches=95 op=5 api_call=15
fi
f=nsysai_h100_2gpu_1s_window.sqlite
if have $f; then
	j=$(auto $f)
	# 3442 kernels + 904 memcpys + 22 memsets; 2276 launched before the 1 s window
	expect_keys $f "$j" exit_code=1 gpu_records=4368 joined_inferred=2092 lost=2276 \
		before_trace_start=2276 ambiguous=0 notes=0 launches=5796 op=2092 none=2276
fi
f=nsysai_mock_no_nvtx.sqlite
if have $f; then
	j=$(auto $f)
	# 2 kernels + 1 memcpy, no NVTX_EVENTS table
	expect_keys $f "$j" exit_code=1 gpu_records=3 lost=3 no_op_layer=3 launches=9 api_call=3
fi
# Every trace of the directory is covered above.
n=$(ls "$DIR" | grep -c -E '\.(json|json\.gz|sqlite)$')
expect_eq "traces in $DIR (all checked above)" "$n" 8
finish
