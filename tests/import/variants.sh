#!/bin/sh
# Every Kineto schema variant and Nsight Systems column set, on small extracts cut from
# public traces (tests/import/data/variants/README.md: source, commit, licence, command).
# The GPU record counts were counted independently (jq over the JSON, sqlite3 count(*)
# over the tables) and the outcomes derived by tests/import/reference.py; each variant is
# read without --from (the kind comes from the content).
# Usage: variants.sh BIN VARIANTS_DIR TMPDIR MKSQLITE
BIN=$1 DIR=$2 TMP=$3 MKSQLITE=$4
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP"
v() { # v FILE EXIT key=value...
	f=$1 want=$2
	shift 2
	j=$("$BIN" --json --max-findings 50 "$f")
	expect_eq "$(basename "$f") exit" $? "$want"
	expect_keys "$(basename "$f")" "$j" file_errors=0 "$@"
}
why() { # why FILE DETAIL: the no_gpu_records finding says why
	expect_eq "$(basename "$1") says why" \
		"$("$BIN" --json "$1" | grep -c "\"cause\":\"no_gpu_records\".*\"detail\":\"$2\"")" 1
}
D=$DIR
# 2020-21: Operator/Runtime/Kernel/Memcpy/Memset, tid strings, "external id" (lower case)
v $D/kineto2021_resnet50_operator_runtime.json 0 records=76 gpu_records=9 joined_observed=9 \
	launches=9 op=9
# 2022: Kernel/Runtime spellings, flows async_gpu, "external id": 0 (unset), no op layer
v $D/kineto2022_hta_inference_rank1_kernel_runtime.json 1 records=54 gpu_records=4 \
	no_op_layer=4 launches=8 api_call=4 joined_observed=0
# 2023: lower-case categories, ac2g flows, External id = correlation (writer bug)
v $D/kineto2023_alexnet_external_id_is_correlation.json 0 records=110 gpu_records=10 \
	joined_inferred=10 same_thread_time_containment=6 external_id_is_correlation_fallback=4 \
	ambiguous=0 op=10
v $D/kineto2023_dlrm_two_threads_before_window.json 1 records=84 gpu_records=9 \
	same_thread_time_containment=6 before_trace_start=3 none=3 op=6
# CUPTI range-profiler mode: cuda_profiler_range counters, no GPU activity records
v $D/kineto2023_cupti_range_profiler.json 1 records=59 gpu_records=0 launches=4 structural=1
why $D/kineto2023_cupti_range_profiler.json \
	"4 launch API events, no kernel/memcpy/memset event; 4 cuda_profiler_range events: CUPTI range-profiler mode records counters, not GPU activity"
# 2024-25: cuda_driver (cuLaunchKernel), fractional microsecond times, python_function,
# gpu_user_annotation, cpu_instant_event
v $D/kineto2025_h100_bert_cuda_driver.json 0 records=99 gpu_records=6 joined_observed=6 op=6
# ROCm (roctracer): HIP calls under cuda_runtime, cid instead of cbid; graph replays
v $D/kineto_rocm62_hta_mi250_minitoy.json 0 records=220 gpu_records=16 joined_observed=16 \
	launches=21 op=16
v $D/kineto_rocm_sglang_graph_replay.json 0 records=27 gpu_records=12 \
	graph_launch_enclosing_op=12 notes=1 op=12
v $D/kineto_rocm_vllm_piecewise_graphs.json 0 records=28 gpu_records=12 \
	graph_launch_enclosing_op=12 notes=3 op=12
# No GPU activity: CPU-only profile, and MTIA (categories this reader does not read)
v $D/kineto_hta_cpu_only_rank34.json 1 records=30 gpu_records=0 structural=1
why $D/kineto_hta_cpu_only_rank34.json "no GPU activity among categories: user_annotation, cpu_op, Trace"
v $D/kineto_mtia_no_gpu.json 1 records=183 gpu_records=0 structural=1
why $D/kineto_mtia_no_gpu.json \
	"no GPU activity among categories: user_annotation, cpu_op, mtia_ccp_events, mtia_runtime"

# Nsight Systems: 2022.2 (name and nameId), 2026.1 (no NVTX table), 2026.2 (NVTX textId)
for s in nsys2022_pipit_saxpy nsys2026_nsysai_mock nsys2026_nsysai_h100_window; do
	"$MKSQLITE" "$D/$s.sql" "$TMP/$s.sqlite" || fails=$((fails + 1))
done
v "$TMP/nsys2022_pipit_saxpy.sqlite" 1 records=137 gpu_records=20 \
	same_thread_time_containment=5 no_enclosing_op=15 launches=95 op=5 api_call=15
v "$TMP/nsys2026_nsysai_mock.sqlite" 1 records=12 gpu_records=3 no_op_layer=3 launches=9 \
	api_call=3
v "$TMP/nsys2026_nsysai_h100_window.sqlite" 0 records=38 gpu_records=7 \
	same_thread_time_containment=7 launches=11 op=7
finish
