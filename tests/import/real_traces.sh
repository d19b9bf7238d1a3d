#!/bin/sh
# Run lineage-validate --from kineto|nsys on every real trace of ../shared/realtraces and
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
have() {
	[ -f "$DIR/$1" ] && return 0
	echo "FAIL: $DIR/$1 missing"
	fails=$((fails + 1))
	return 1
}

# Kineto. records = len(traceEvents); gpu_records = events with cat kernel, gpu_memcpy,
# gpu_memset (jq '[.traceEvents[]|select(.cat=="kernel" or .cat=="gpu_memcpy" or
# .cat=="gpu_memset")]|length').
f=tracelens_h100_bert_small.json.gz
if have $f; then
	j=$(run kineto $f); expect_eq "$f exit" $? 0
	# every launch carries the External id of the cpu_op that encloses it on its thread
	expect_keys $f "$j" exit_code=0 records=2551 gpu_records=61 joined_observed=61 \
		joined_inferred=0 lost=0 ambiguous=0 file_errors=0
fi
f=param_dlrm_worker1_step_12.pt.trace.json
if have $f; then
	j=$(run kineto $f)
	# External id == correlation on every runtime event (writer bug): joined by time only;
	# 64 GPU records have correlations below the first cuda_runtime correlation (41615).
	expect_keys $f "$j" exit_code=1 records=3424 gpu_records=326 joined_observed=0 \
		joined_inferred=262 ambiguous=0 before_trace_start=64
	expect_eq "$f lost" "$(num "$j" lost)" 64
fi
f=hta_alexnet_critical_path.json.gz
if have $f; then
	j=$(run kineto $f)
	# External id == correlation, and 17 of those ids name an unrelated cpu_op
	expect_keys $f "$j" exit_code=1 records=1408 gpu_records=98 joined_observed=0 \
		joined_inferred=81 lost=0 ambiguous=17
	j=$("$BIN" --from kineto --json --max-findings 1000 "$DIR/$f")
	expect_eq "$f ambiguous external_id_is_correlation" \
		"$(count_cause "$j" ambiguous external_id_is_correlation)" 17
fi
f=tracelens_rocm_vllm_decode_full_graph_replay.json.gz
if have $f; then
	j=$(run kineto $f)
	# one hipGraphLaunch (correlation 505113, no External id) replays 421 kernels
	expect_keys $f "$j" exit_code=1 records=1993 gpu_records=434 joined_observed=13 \
		joined_inferred=0 ambiguous=0 lost=421 graph_replay=421
fi

# Nsight Systems. gpu_records = rows of CUPTI_ACTIVITY_KIND_KERNEL + _MEMCPY + _MEMSET.
f=pipit_nsys2022_saxpy_mpi_cuda.sqlite
if have $f; then
	j=$(run nsys $f)
	# 5 kernels + 15 memcpys; the memcpys and setup launches lie outside the NVTX ranges
	expect_keys $f "$j" exit_code=1 gpu_records=20 joined_inferred=5 lost=15 \
		no_enclosing_op=15 ambiguous=0 notes=0 launches=95
fi
f=nsysai_h100_2gpu_1s_window.sqlite
if have $f; then
	j=$(run nsys $f)
	# 3442 kernels + 904 memcpys + 22 memsets; 2276 launched before the 1 s window
	expect_keys $f "$j" exit_code=1 gpu_records=4368 joined_inferred=2092 lost=2276 \
		before_trace_start=2276 ambiguous=0 notes=0 launches=5796
fi
f=nsysai_mock_no_nvtx.sqlite
if have $f; then
	j=$(run nsys $f)
	# 2 kernels + 1 memcpy, no NVTX_EVENTS table
	expect_keys $f "$j" exit_code=1 gpu_records=3 lost=3 no_op_layer=3 launches=9
fi
finish
