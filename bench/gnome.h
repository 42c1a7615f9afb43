/* The GNOME contenders: each does the same three things on a GMainLoop, the way a GNOME app
 * would, and bench/gnome.c times them. A contender is one file defining gnome_contender; it is
 * linked with bench/gnome.c into a program of its own (run.sh, build_gnome), so that its
 * resident memory is its own. */
#ifndef PORTAL_AUTH_BENCH_GNOME_H
#define PORTAL_AUTH_BENCH_GNOME_H

#include <glib.h>

/* How an operation ends: ok when it did what it should (the answer read, the session stored
   or found). Called from the main loop, once, never inside the starting call. */
typedef void (*gnome_done_fn)(gboolean ok, gpointer data);

typedef struct {
    const char *name; /* the contender's name in the result lines */
    /* Called once, before the loop runs. */
    void (*setup)(void);
    /* GET /methods, its answer read into typed values. */
    void (*get_methods)(gnome_done_fn done, gpointer data);
    /* A magic-link grant exchange (a fresh grant each time), its session persisted in the
       keyring before done. */
    void (*exchange)(gnome_done_fn done, gpointer data);
    /* The session read back from the keyring and decoded. */
    void (*restore)(gnome_done_fn done, gpointer data);
} gnome_contender;

extern const gnome_contender contender;

/* The next magic-link grant token, mlg_bench00000001 and on (nginx answers every one). */
const char *gnome_next_grant(void);

/* An operation in flight, for a contender's callbacks to end: gnome_pend makes one,
   gnome_end frees it and calls done. */
typedef struct gnome_pending gnome_pending;
gnome_pending *gnome_pend(gnome_done_fn done, gpointer data);
void gnome_end(gnome_pending *pending, gboolean ok);

#endif
