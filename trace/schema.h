/* SPDX-License-Identifier: MIT */
/* schema.h - per-record-type field names and types (internal to the validator). */
#ifndef LIN_VALIDATOR_SCHEMA_H
#define LIN_VALIDATOR_SCHEMA_H

#include <stdint.h>

#include "reader.h"

#define LIN_SCHEMA_MAX 48

struct lin_schema {
	const char *name;
	const char *types; /* one code per field, see schema.c */
	const char *fields[LIN_READER_MAX_FIELDS];
};

/* NULL for a type this validator does not know. */
const struct lin_schema *lin_schema_get(uint64_t type);

#endif
