/* SPDX-License-Identifier: MIT */
/*
 * lineage/common.h - export macro, error codes and version query shared by every module.
 */
#ifndef LINEAGE_COMMON_H
#define LINEAGE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "lineage/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LIN_BUILDING_LIBRARY)
#define LIN_API __attribute__((visibility("default")))
#else
#define LIN_API
#endif

/*
 * LIN_DEPRECATED(msg) - marks an old name that is kept, and exported, so that existing
 * callers still compile and existing binaries still link; @msg names its replacement.
 * Define LIN_NO_DEPRECATED_WARNINGS before including a lineage header to silence them.
 */
#if defined(LIN_NO_DEPRECATED_WARNINGS) || !(defined(__GNUC__) || defined(__clang__))
#define LIN_DEPRECATED(msg)
#else
#define LIN_DEPRECATED(msg) __attribute__((deprecated(msg)))
#endif

/*
 * Project error codes. Every fallible call returns 0 or a negative value: either -errno
 * (-EINVAL, -ENOMEM, -EIO, ...) or -LIN_E*, one of the codes below. X(name, value, text).
 */
#define LIN_ERRNO_MAP(X) \
	X(LIN_ESTALE_TOKEN, 4001, "token refers to a retired or re-issued epoch or request") \
	X(LIN_EBADTOKEN, 4002, "token failed its integrity check (corrupt or uninitialised)") \
	X(LIN_EFOREIGN, 4003, "token or scope belongs to another runtime") \
	X(LIN_ESCOPE_ORDER, 4004, "scope closed out of LIFO order") \
	X(LIN_ESCOPE_THREAD, 4005, "scope closed on a thread other than the one that opened it") \
	X(LIN_ESCOPE_CLOSED, 4006, "scope already closed") \
	X(LIN_ESCOPE_DEPTH, 4007, "too many nested scopes on this thread") \
	X(LIN_ENOCONTEXT, 4008, "no current request or epoch on this thread") \
	X(LIN_ENOTFOUND, 4009, "no live request or epoch with that id") \
	X(LIN_ELAUNCH_ORDER, 4010, "launch ended out of order or twice") \
	X(LIN_EBACKEND, 4011, "the binding backend failed") \
	X(LIN_ETRACE, 4012, "the trace could not be written") \
	X(LIN_ENOCUPTI, 4013, "CUPTI is not usable in this process") \
	X(LIN_ELAUNCH_DEPTH, 4014, "too many nested launches on this thread")

enum lin_errno {
	LIN_ERRNO_START = 4000,
#define LIN_X_ENUM(name, value, text) name = value,
	LIN_ERRNO_MAP(LIN_X_ENUM)
#undef LIN_X_ENUM
		LIN_ERRNO_END
};

/*
 * lin_strerror - describe an error code.
 * @err: a value returned by any lineage call (negative or positive, errno or LIN_E*).
 * Return: a static string; never NULL. Unknown codes give "unknown error".
 * Context: any thread; async-signal-safe.
 * Since: 0.1
 */
LIN_API const char *lin_strerror(int err);

/*
 * lin_err_name - the symbolic name of an error code ("LIN_ESTALE_TOKEN", "EINVAL").
 * Return: a static string; never NULL ("?" when unknown).
 * Context: any thread.
 * Since: 0.1
 */
LIN_API const char *lin_err_name(int err);

/*
 * lin_version_string - the library's version as "MAJOR.MINOR.PATCH".
 * Return: a static string, the version of the library actually loaded (which may differ
 * from LIN_VERSION_* seen at compile time).
 * Context: any thread.
 * Since: 0.1
 */
LIN_API const char *lin_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
