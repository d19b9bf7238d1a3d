/* SPDX-License-Identifier: MIT */
/*
 * sim.h - a runtime with a simulated CUPTI binding, for the adapter tests (no GPU needed).
 *
 * The backend plays CUPTI's external-correlation stack: each push (a lin_launch_begin with
 * a current epoch) is one launch API call that gets a fresh correlation id. sim_finish then
 * writes the records CUPTI would have delivered for those calls (api, ext_correlation,
 * kernel with grid_id = correlation) after the runtime's own records (before its closing
 * trace_end record), writes a truth file
 * from what the workload itself declared with sim_truth, and checks the result two ways:
 *   1. by reading the runtime's trace: every launch record carries an epoch, pushed that
 *      epoch, and the epoch's declared requests are exactly the workload's truth;
 *   2. with `lineage-validate --json --expect`: exit 0, every kernel observed and matched,
 *      nothing lost, incorrect or structural (misuse included).
 */
#ifndef LIN_ADAPTER_SIM_H
#define LIN_ADAPTER_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <lineage/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sim;

/* Create a runtime (writer thread on, trace into memory). Exits the process on failure. */
struct sim *sim_open(void);
lin_runtime *sim_rt(struct sim *s);

/* The correlation id of the calling thread's innermost open launch; 0 if nothing was pushed. */
uint64_t sim_correlation(void);

/* The workload's own record: the launch with correlation @corr serves @reqs[0..n). */
void sim_truth(struct sim *s, uint64_t corr, const uint64_t *reqs, size_t n);

/*
 * Free the runtime and run both checks; @launches is how many launches the workload made.
 * Files <name>.lintrace and <name>.truth are written to the current directory.
 * Return: 0 when every check passed; 1 otherwise (each failure printed to stderr).
 */
int sim_finish(struct sim *s, const char *validator, const char *name, size_t launches);

#ifdef __cplusplus
}
#endif
#endif
