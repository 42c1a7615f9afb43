/* libportalauth.so is also a program, as libc.so.6 is: run by the dynamic loader,
 *   <interpreter> <the library> --portal-auth-keyring-helper
 * it serves the keyring to a forked child whose GLib is its parent's (docs/desktop.md
 * "fork()"). This target is linked into the library alone (PortalAuthC), never into a
 * program the core is part of: it gives the library its PT_INTERP and its entry point (the
 * linker's -e, in Package.swift), which does what a program's _start does: hands the C
 * library the stack it was started with, which then runs the library's initialisers (the
 * Swift runtime's among them) and pa_program_main. Loaded as a library, none of this runs. */
#include "program_entry.h"

#include <unistd.h>

#define PA_HIDDEN __attribute__((visibility("hidden")))

#ifdef PA_PROGRAM_INTERPRETER
/* The loader a program needs; PT_INTERP is ignored when the library is loaded as one. */
const char pa_interpreter[] __attribute__((section(".interp"), used)) = PA_PROGRAM_INTERPRETER;

/* The program's main (Sources/PortalAuthCore/Storage/KeyringHelper.swift). */
extern int pa_program_main(int argc, char **argv);

extern int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

static int program_main(int argc, char **argv, char **environment) {
    (void)environment;
    return pa_program_main(argc, argv);
}

/* From pa_program_start: `stack` as the kernel and loader left it (argc, then argv). With init
   NULL, glibc 2.34 and later run the program's initialisers (the library's own) themselves;
   an older glibc would not, so the helper needs 2.34 (Debian 12 has 2.36). */
PA_HIDDEN __attribute__((noreturn, used)) void pa_program_begin(long *stack, void (*loader_fini)(void)) {
    __libc_start_main(program_main, (int)stack[0], (char **)(stack + 1), NULL, NULL, loader_fini, stack);
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
