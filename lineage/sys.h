/* SPDX-License-Identifier: MIT */
/*
 * sys.h - two system helpers every thread-starting or file-writing module of the library
 * shares (the runtime, the CUPTI binding, the exporters above it). Internal.
 */
#ifndef LIN_SYS_H
#define LIN_SYS_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>

/* Start a library thread with every signal blocked: the application's signals are never
 * delivered to it. Return: 0 or -errno. */
static inline int lin_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/* write(2) all of @p[0..@n), through EINTR and short writes. Return: 0 or -errno. */
static inline int lin_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

#endif
