/* The system C libraries the core uses (libcurl, libsecret with GLib, GIO, libqrencode,
 * libpng) are not linked: each is opened with dlopen the first time a feature needs it, so
 * that loading libportalauth.so and making a client costs none of them. This target only
 * loads them; the C code that talks to the desktop over them is Sources/CDesktop's.
 *
 * Each library's file (curl.c, secret.c, gio.c, qrencode.c, png.c) lists the functions the
 * core calls and, through PA_LIBRARY, defines each under its real name as a forwarder to the
 * function resolved with dlsym. The library is opened once, thread-safely, by the first
 * call to its pa_<library>_load_error (declared in the library's shim, or gio.h; the core
 * calls it before first use and reports its message) or to any forwarder. The definitions
 * are hidden: libportalauth.so exports none of them, and a program linked with the core
 * never interposes them on the real library's. */
#ifndef PORTAL_AUTH_LOADER_H
#define PORTAL_AUTH_LOADER_H

#include <pthread.h>
#include <stddef.h>

typedef struct pa_library {
    const char *name;            /* in messages: "libcurl" */
    const char *soname;          /* what dlopen opens: "libcurl.so.4" */
    const char *const *symbols;  /* the functions to resolve */
    void **functions;            /* their addresses, in the order of `symbols` */
    size_t count;
    pthread_once_t once;
    void (*open)(void);          /* pa_library_open of this library, for pthread_once */
    const char *error;           /* once opened: NULL, or `message` */
    char message[512];
} pa_library;

/* Opens the library and resolves every function; on failure sets `error` (the library's
   name and dlerror's text) and keeps nothing of it. */
void pa_library_open(pa_library *library);

/* Opens the library on the first call; returns NULL, or why it could not be loaded. */
static inline const char *pa_library_load(pa_library *library) {
    pthread_once(&library->once, library->open);
    return library->error;
}

#define PA_HIDDEN __attribute__((visibility("hidden")))

/* A library's functions are a list LIST(F, V, R) of entries
 *   F(name, return type, (parameters), (arguments), what to return when it is missing)
 *   V(name, (parameters), (arguments))    a function returning void
 *   R(name)                               resolved only, called through PA_FUNCTION
 * A forwarder is only ever called after its library loaded (the core checks first); the
 * value for a missing library keeps a call that did not check from crashing. */
#define PA_INDEX(name, ...) name##_index,
#define PA_SYMBOL(name, ...) #name,
#define PA_NOTHING(name)

/* The resolved function `name`, with the type its header declares. */
#define PA_FUNCTION(name) ((__typeof__(name) *)pa_functions[name##_index])

/* Defines `name` to call the resolved `function` (itself, or the variadic function a typed
   helper calls). (name) in parentheses: a header may also define it as a function-like macro. */
#define PA_CALLING(name, type, parameters, function, arguments, missing) \
    PA_HIDDEN type (name) parameters { \
        if (pa_library_load(&library)) return missing; \
        return PA_FUNCTION(function) arguments; \
    }

#define PA_FORWARD(name, type, parameters, arguments, missing) \
    PA_CALLING(name, type, parameters, name, arguments, missing)

/* PA_CALLING of a function returning void. */
#define PA_CALLING_VOID(name, parameters, function, arguments) \
    PA_HIDDEN void (name) parameters { \
        if (!pa_library_load(&library)) PA_FUNCTION(function) arguments; \
    }

#define PA_FORWARD_VOID(name, parameters, arguments) PA_CALLING_VOID(name, parameters, name, arguments)

/* The file's library `library` ("name", "soname"), the forwarders of its LIST, and
   `load_error`, which opens it and returns NULL or why it could not be loaded. */
#define PA_LIBRARY(load_error, display_name, soname, LIST) \
    enum { LIST(PA_INDEX, PA_INDEX, PA_INDEX) pa_function_count }; \
    static const char *const pa_symbols[] = { LIST(PA_SYMBOL, PA_SYMBOL, PA_SYMBOL) }; \
    static void *pa_functions[pa_function_count]; \
    static void pa_open(void); \
    static pa_library library = { \
        display_name, soname, pa_symbols, pa_functions, pa_function_count, PTHREAD_ONCE_INIT, pa_open, NULL, "" \
    }; \
    static void pa_open(void) { pa_library_open(&library); } \
    PA_HIDDEN const char *load_error(void) { return pa_library_load(&library); } \
    LIST(PA_FORWARD, PA_FORWARD_VOID, PA_NOTHING)

#endif
