/*
 * Test-only stand-in for C-Blosc2's private blosc/threading.h.
 *
 * On POSIX the reference's blosc2_pthread_* names are plain aliases of the
 * pthread API (its own Windows emulation is the only real code there), so the
 * aliases are all a test needs.
 */
#ifndef B2ND_CLIENT_SHIM_THREADING_H
#define B2ND_CLIENT_SHIM_THREADING_H

#ifdef _WIN32
#error "this shim covers POSIX hosts only"
#endif

#include <pthread.h>

#define blosc2_pthread_t pthread_t
#define blosc2_pthread_create(thr, attr, fn, arg) pthread_create((thr), (attr), (fn), (arg))
#define blosc2_pthread_join(thr, ret) pthread_join((thr), (ret))
#define blosc2_pthread_mutex_t pthread_mutex_t
#define blosc2_pthread_mutex_init(m, attr) pthread_mutex_init((m), (attr))
#define blosc2_pthread_mutex_destroy(m) pthread_mutex_destroy((m))
#define blosc2_pthread_mutex_lock(m) pthread_mutex_lock((m))
#define blosc2_pthread_mutex_unlock(m) pthread_mutex_unlock((m))
#define blosc2_pthread_cond_t pthread_cond_t

#endif
