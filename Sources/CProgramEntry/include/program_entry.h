/* The library's entry point as a program (entry.c), and the loader that runs it. */
#ifndef PORTAL_AUTH_PROGRAM_ENTRY_H
#define PORTAL_AUTH_PROGRAM_ENTRY_H

#if defined(__x86_64__)
#define PA_PROGRAM_INTERPRETER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define PA_PROGRAM_INTERPRETER "/lib/ld-linux-aarch64.so.1"
#endif

#endif
