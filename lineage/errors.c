/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "lineage/common.h"

#define LIN_STR2(x) #x
#define LIN_STR(x) LIN_STR2(x)

LIN_API const char *lin_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0: return "success";
#define LIN_X_TEXT(name, value, text) \
	case value: return text;
		LIN_ERRNO_MAP(LIN_X_TEXT)
#undef LIN_X_TEXT
	case EINVAL: return "invalid argument";
	case ENOMEM: return "out of memory";
	case ENOSPC: return "buffer too small";
	case EIO: return "input/output error";
	default: break;
	}
	if (err < LIN_ERRNO_START) {
		/* strerror() is not thread-safe; strerrordesc_np (glibc >= 2.32) is. */
		const char *s = strerrordesc_np(err);
		if (s)
			return s;
	}
	return "unknown error";
}

LIN_API const char *lin_err_name(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0: return "OK";
#define LIN_X_NAME(name, value, text) \
	case value: return #name;
		LIN_ERRNO_MAP(LIN_X_NAME)
#undef LIN_X_NAME
	default: break;
	}
	if (err < LIN_ERRNO_START) {
		const char *s = strerrorname_np(err);
		if (s)
			return s;
	}
	return "?";
}

LIN_API const char *lin_version_string(void)
{
	return LIN_STR(LIN_VERSION_MAJOR) "." LIN_STR(LIN_VERSION_MINOR) "." LIN_STR(LIN_VERSION_PATCH);
}
