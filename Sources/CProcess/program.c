/* Where the library runs as a program (Sources/CProgramEntry): the loader that runs it, and
 * the library's file when it can. See include/process.h. */
#define _GNU_SOURCE
#include "process.h"
#include "../../CProgramEntry/include/program_entry.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stddef.h>

#define PA_HIDDEN __attribute__((visibility("hidden")))

#ifdef PA_PROGRAM_INTERPRETER
/* The library's entry point: defined where CProgramEntry is linked in (the library alone). */
extern char pa_program_start[] __attribute__((weak));

PA_HIDDEN const char *pa_program_interpreter(void) { return PA_PROGRAM_INTERPRETER; }

/* The file this code was loaded from, when its entry point is pa_program_start (the
   library: not a program the core is linked into), by an absolute path. */
PA_HIDDEN const char *pa_program_path(void) {
    Dl_info info;
    if (!pa_program_start || !dladdr((void *)pa_program_path, &info) || !info.dli_fname || info.dli_fname[0] != '/'
        || !info.dli_fbase)
        return NULL;
    const ElfW(Ehdr) *header = info.dli_fbase;  /* the first page is mapped at the base */
    return header->e_entry == (uintptr_t)pa_program_start - (uintptr_t)info.dli_fbase ? info.dli_fname : NULL;
}
#else
PA_HIDDEN const char *pa_program_interpreter(void) { return NULL; }
PA_HIDDEN const char *pa_program_path(void) { return NULL; }
#endif
