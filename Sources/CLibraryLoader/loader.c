#include "loader.h"

#include <dlfcn.h>
#include <stdio.h>

/* Records dlerror's text (it names the file or the missing symbol, nothing secret). */
static void pa_library_failed(pa_library *library) {
    snprintf(library->message, sizeof library->message, "%s could not be loaded: %s", library->name, dlerror());
    library->error = library->message;
}

PA_HIDDEN void pa_library_open(pa_library *library) {
    /* RTLD_LOCAL: its symbols stay out of the process's global scope, as when it was
       linked to libportalauth.so. */
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        pa_library_failed(library);
        return;
    }
    for (size_t i = 0; i < library->count; i++) {
        library->functions[i] = dlsym(handle, library->symbols[i]);
        if (!library->functions[i]) {
            pa_library_failed(library);
            dlclose(handle);
            return;
        }
    }
}
