/* ait_options_from_env (include/ait.h): the one place the library reads
 * the environment, and only when a program asks it to. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/options.h"

/* $HOME/.cache/ait, made once: the options hold a pointer, so the string
 * must outlive the call, and HOME is not expected to move under a running
 * program. "" when HOME is unset, empty or too long. */
static char home_cache[4096];
static pthread_once_t home_once = PTHREAD_ONCE_INIT;

static void make_home_cache(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home ||
        snprintf(home_cache, sizeof home_cache, "%s/.cache/ait", home) >= (int)sizeof home_cache)
        home_cache[0] = 0;
}

static const char *env_cache_dir(void)
{
    const char *d = getenv("AIT_CACHE_DIR");
    if (d && *d) return d;
    pthread_once(&home_once, make_home_cache);
    return home_cache[0] ? home_cache : NULL;
}

ait_status ait_options_from_env(ait_session_options *so, ait_tune_options *to, ait_error *err)
{
    if (so) TRY(OPTS_CHECK(so, err));
    if (to) TRY(OPTS_CHECK(to, err));
    const char *dir = env_cache_dir(), *jit = getenv("AIT_JIT");
    /* Only the fields the caller's (perhaps older) structs hold. */
    if (so && OPTS_HAS(so, jit) && jit && !strcmp(jit, "1")) so->jit = 1;
    if (so && OPTS_HAS(so, cache_dir)) so->cache_dir = dir;
    if (to && OPTS_HAS(to, cache_dir)) to->cache_dir = dir;
    return AIT_OK;
}
