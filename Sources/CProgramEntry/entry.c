/* libportalauth.so is also a program, as libc.so.6 is: run by the dynamic loader,
 *   <interpreter> <the library> --portal-auth-keyring-helper
 * it serves the keyring to a forked child whose GLib is its parent's (docs/desktop.md
 * "fork()"). This target is linked into the library alone (PortalAuthC), never into a
 * program the core is part of: it gives the library its PT_INTERP and its entry point (the
 * linker's -e, in Package.swift), which does what a program's _start does: hands the C
 * library the stack it was started with and an initialiser (program_init), which runs the
 * library's own (the Swift runtime's among them), then pa_program_main. Loaded as a library,
 * none of this runs. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "program_entry.h"

#include <link.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#define PA_HIDDEN __attribute__((visibility("hidden")))

#ifdef PA_PROGRAM_INTERPRETER
/* The loader a program needs; PT_INTERP is ignored when the library is loaded as one. */
const char pa_interpreter[] __attribute__((section(".interp"), used)) = PA_PROGRAM_INTERPRETER;

/* The program's main (Sources/PortalAuthCore/Support/ProgramMain.swift). */
extern int pa_program_main(int argc, char **argv);

extern int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
                             void (*init)(int, char **, char **), void (*fini)(void), void (*rtld_fini)(void),
                             void *stack_end);

/* The helper holds sessions in its memory: it never dumps core (no core file, and no
   dumpable process, which the user's other processes cannot ptrace or read through /proc
   either). Set before anything is read; the program runs no further if it cannot be. */
static int program_main(int argc, char **argv, char **environment) {
    (void)environment;
    const struct rlimit no_core = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &no_core) != 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return 1;
    return pa_program_main(argc, argv);
}

struct program_arguments {
    int argc;
    char **argv;
    char **environment;
};

/* Runs the initialisers of the first object dl_iterate_phdr reports, the program (this
   library): DT_INIT, then DT_INIT_ARRAY, as the loader left them (relocated). */
static int run_program_initialisers(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const struct program_arguments *arguments = data;
    const ElfW(Dyn) *dynamic = NULL;
    for (ElfW(Half) index = 0; index < info->dlpi_phnum; index++)
        if (info->dlpi_phdr[index].p_type == PT_DYNAMIC)
            dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[index].p_vaddr);
    ElfW(Addr) init = 0, array = 0;
    size_t array_size = 0;
    for (; dynamic != NULL && dynamic->d_tag != DT_NULL; dynamic++) {
        if (dynamic->d_tag == DT_INIT) init = info->dlpi_addr + dynamic->d_un.d_ptr;
        if (dynamic->d_tag == DT_INIT_ARRAY) array = info->dlpi_addr + dynamic->d_un.d_ptr;
        if (dynamic->d_tag == DT_INIT_ARRAYSZ) array_size = dynamic->d_un.d_val;
    }
    if (init != 0) ((void (*)(void))init)();
    void (**initialisers)(int, char **, char **) = (void (**)(int, char **, char **))array;
    for (size_t index = 0; array != 0 && index < array_size / sizeof *initialisers; index++)
        initialisers[index](arguments->argc, arguments->argv, arguments->environment);
    return 1; /* the program only */
}

/* The program's init for __libc_start_main. Before glibc 2.34 a program passed its own (crt1's
   __libc_csu_init) and the C library ran no initialiser of the program without one; from 2.34
   on, with init NULL, the C library runs them itself, and with an init it calls that instead.
   Passing this one runs the library's initialisers (the Swift runtime's among them) once on
   every glibc from the library's floor on. */
static void program_init(int argc, char **argv, char **environment) {
    struct program_arguments arguments = {argc, argv, environment};
    dl_iterate_phdr(run_program_initialisers, &arguments);
}

/* From pa_program_start: `stack` as the kernel and loader left it (argc, then argv). */
PA_HIDDEN __attribute__((noreturn, used)) void pa_program_begin(long *stack, void (*loader_fini)(void)) {
    __libc_start_main(program_main, (int)stack[0], (char **)(stack + 1), program_init, NULL, loader_fini, stack);
    _exit(127);
}

#if defined(__x86_64__)
/* The System V ABI: the stack pointer at argc, the loader's finaliser in rdx. */
__asm__(".pushsection .text\n.globl pa_program_start\n.hidden pa_program_start\n.type pa_program_start,@function\n"
        "pa_program_start:\n  xor %ebp, %ebp\n  mov %rsp, %rdi\n  mov %rdx, %rsi\n  and $-16, %rsp\n"
        "  call pa_program_begin\n  hlt\n.popsection\n");
#elif defined(__aarch64__)
/* AAPCS64: the stack pointer at argc, the loader's finaliser in x0. */
__asm__(".pushsection .text\n.globl pa_program_start\n.hidden pa_program_start\n.type pa_program_start,%function\n"
        "pa_program_start:\n  mov x29, #0\n  mov x30, #0\n  mov x1, x0\n  mov x0, sp\n"
        "  bl pa_program_begin\n  brk #0\n.popsection\n");
#endif
#endif
