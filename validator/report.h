/* SPDX-License-Identifier: MIT */
/*
 * report.h - lineage-validate's reports on a joined run (docs/validator.md): JSON and
 * text, after lin_joiner_finish() (join/join.h).
 * Context: single-threaded.
 */
#ifndef LIN_VALIDATOR_REPORT_H
#define LIN_VALIDATOR_REPORT_H

#include <stdio.h>

#include "join.h"

void lin_validator_report_json(const struct lin_joiner *v, FILE *out);
void lin_validator_report_text(const struct lin_joiner *v, FILE *out);

#endif
