/* The load figure, in a process linked to neither contender (so dlopen really loads):
 *   load library   dlopen BENCH_LIBRARY and make the first client, default options: keyring
 *                  storage (c-library)
 *   load floor     dlopen libcurl and libsecret and make a curl handle (c-floor)
 * Time from before dlopen to the first handle, and the growth of resident memory. */
#include <portal_auth.h>

#include "bench.h"

#include <dlfcn.h>

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    double rss = rss_mb(), start = now_ms();
    if (strcmp(what, "library") == 0) {
        void *library = dlopen(getenv("BENCH_LIBRARY"), RTLD_NOW | RTLD_LOCAL);
        if (!library) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        void (*options_init)(portal_auth_options *, size_t) =
            (void (*)(portal_auth_options *, size_t))dlsym(library, "portal_auth_options_init");
        portal_auth_code (*make)(const portal_auth_options *, portal_auth **, portal_auth_error **) =
            (portal_auth_code (*)(const portal_auth_options *, portal_auth **, portal_auth_error **))dlsym(library, "portal_auth_new");
        portal_auth_options options;
        options_init(&options, sizeof options);
        bench_options(&options, PORTAL_AUTH_STORAGE_KEYRING);
        portal_auth *client = NULL;
        if (make(&options, &client, NULL) != PORTAL_AUTH_OK) return 1;
        emit("c-library", "load_ms", now_ms() - start);
        emit("c-library", "load_rss_mb", rss_mb() - rss);
    } else if (strcmp(what, "floor") == 0) {
        void *curl = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        void *secret = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!curl || !secret) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        void *(*easy_init)(void) = (void *(*)(void))dlsym(curl, "curl_easy_init");
        if (!easy_init || !easy_init()) return 1;
        emit("c-floor", "load_ms", now_ms() - start);
        emit("c-floor", "load_rss_mb", rss_mb() - rss);
    } else {
        fprintf(stderr, "usage: %s library|floor\n", argv[0]);
        return 2;
    }
    return 0;
}
