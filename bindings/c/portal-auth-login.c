/*
 * portal-auth-login: signs a user in to a Portal auth environment from a terminal, through
 * libportalauth's C ABI, and keeps the session in the desktop keyring.
 *
 *   by magic link (the default): asks for the email and sends the link. With a loopback
 *       redirect URL, the browser the user opens the email in brings the link back and the
 *       program finishes by itself; with a custom scheme, the desktop starts the app's URL
 *       handler (--redirect URL), which hands the link to this running program. Either way
 *       the link may also be pasted.
 *   --redirect URL: the app's URL handler: hands the URL to the running program, or, when
 *       none runs, signs in with it here
 *   --activated: started by D-Bus activation (a DBusActivatable desktop entry): waits for the
 *       URL the desktop hands over on the session bus, and signs in with it
 *   --browser google|apple: signs in in the user's browser ($BROWSER, else xdg-open)
 *   --restore: prints the signed-in user;  --sign-out: forgets the session
 *
 * A TOTP step enrolls an authenticator app on the first sign-in (QR code in the terminal,
 * and the secret for entry by hand), then asks for the code. Every library call is
 * asynchronous; this program starts one at a time and waits for its callback.
 * Exit statuses: see usage() and README.md.
 */
#define _POSIX_C_SOURCE 200809L

#include <portal_auth.h>

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    EXIT_NOT_SIGNED_IN = 1,      /* --restore: no session is stored */
    EXIT_USAGE = 2,              /* the command line is wrong */
    EXIT_INPUT_ENDED = 3,        /* standard input ended before the sign-in did */
    EXIT_NOT_A_SIGN_IN_LINK = 4, /* --redirect: the URL is not a sign-in redirect of this app */
    EXIT_NOTHING_OPENED = 5,     /* --activated: no redirect came in time */
    EXIT_LIBRARY = 10            /* plus the library's error code (PORTAL_AUTH_E_*) */
};

/* Wrong codes the user may type before the sign-in gives up. */
#define TOTP_ATTEMPTS 3

static const char *program = "portal-auth-login";

static void usage(FILE *to) {
    fprintf(to,
        "Usage: %s --environment ID [OPTION]...\n"
        "Signs a user in to a Portal auth environment and keeps the session in the keyring.\n"
        "\n"
        "  --environment ID      the Portal auth environment id (required)\n"
        "  --api-host HOST       Portal's API host or base URL (default api.portalhq.io)\n"
        "  --redirect-url URL    the redirect URL allow-listed for the app\n"
        "                        (default myapp://auth/callback)\n"
        "  --from-email EMAIL    magic link: the sender address (with --template-id)\n"
        "  --template-id ID      magic link: the email template\n"
        "  --application-id ID   the app's reverse-DNS name: its own keyring item, and its name\n"
        "                        on the session bus, where a DBusActivatable desktop entry\n"
        "                        hands it the redirect\n"
        "  --redirect URL        the app's URL handler: hand the redirect URL it received to\n"
        "                        the running portal-auth-login, or sign in with it here\n"
        "  --activated           started by D-Bus activation: sign in with the redirect the\n"
        "                        desktop hands over (needs --application-id)\n"
        "  --browser PROVIDER    sign in with google or apple in the browser; needs a loopback\n"
        "                        redirect URL (http://127.0.0.1:PORT/PATH)\n"
        "  --timeout SECONDS     how long to wait for the browser (default 300 with --browser,\n"
        "                        900 for a magic link with a loopback redirect URL, 60 with\n"
        "                        --activated)\n"
        "  --restore             print the signed-in user\n"
        "  --sign-out            forget the stored session\n"
        "  --help                show this help\n"
        "\n"
        "Without --redirect, --browser, --restore or --sign-out it signs in by magic link:\n"
        "it asks for the email and sends the link; opening the link finishes the sign-in\n"
        "here (a loopback redirect URL, or the app's URL handler forwarding it), and so\n"
        "does pasting it.\n"
        "\n"
        "Exit status:\n"
        "   0  signed in, restored or signed out\n"
        "   1  --restore: not signed in\n"
        "   2  wrong command line\n"
        "   3  standard input ended before the sign-in did\n"
        "   4  --redirect: not a sign-in link of this app\n"
        "   5  --activated: no redirect came in time\n"
        "  10 + the library's error code, for example 11 invalid argument, 12 magic link\n"
        "      not configured, 14 authentication failed, 18 keyring failure,\n"
        "      30 unauthorized (HTTP 401: a spent link, wrong codes), 31 HTTP error,\n"
        "      32 network failure, 50 browser sign-in closed (timed out), 51 browser\n"
        "      sign-in unavailable (see README.md for all)\n",
        program);
}

/* ---- One asynchronous call at a time: its callback fills a reply, main waits for it. ---- */

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int done;
    portal_auth_code code;      /* PORTAL_AUTH_OK, or the error's code */
    portal_auth_reason reason;  /* the error's reason (PORTAL_AUTH_REASON_*) */
    char *message;              /* the error's message (malloc'd) */
    char *name;                 /* INVALID_ARGUMENT: the argument's name (malloc'd) */
    char *url;                  /* SIGN_IN_UNAVAILABLE, NO_BROWSER: the URL to show (malloc'd) */
    int kind;                   /* 0: no result; else PORTAL_AUTH_RESULT_* */
    char *user_jwt;             /* TOTP_REQUIRED (malloc'd; a secret: never printed) */
    char *totp_link;            /* TOTP_REQUIRED on the first sign-in (malloc'd; a secret) */
    portal_auth_session *session; /* retained */
} reply;

static char *copy(const char *text) { return text ? strdup(text) : NULL; }

static void reply_init(reply *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
}

static void reply_clear(reply *r) {
    free(r->message);
    free(r->name);
    free(r->url);
    free(r->user_jwt);
    free(r->totp_link);
    portal_auth_session_release(r->session);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
}

/* Written to by every callback, so that main can wait for a callback and for standard input
   at once (await_reply_or_line). */
static int wake_pipe[2] = { -1, -1 };

static void wake_main(void) {
    if (wake_pipe[1] >= 0 && write(wake_pipe[1], "", 1) < 0) { /* full: main is awake already */ }
}

/* Called by every callback last: records the error and wakes main. */
static void finish(reply *r, const portal_auth_error *error) {
    pthread_mutex_lock(&r->lock);
    r->code = error ? portal_auth_error_code(error) : PORTAL_AUTH_OK;
    r->reason = portal_auth_error_reason(error);
    if (error) {
        r->message = copy(portal_auth_error_message(error));
        r->name = copy(portal_auth_error_name(error));
        r->url = copy(portal_auth_error_url(error));
    }
    r->done = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    wake_main();
}

static int is_done(reply *r) {
    pthread_mutex_lock(&r->lock);
    int done = r->done;
    pthread_mutex_unlock(&r->lock);
    return done;
}

/* Waits for the callback of a call whose start returned `started`. */
static void await_reply(reply *r, portal_auth_code started) {
    if (started != PORTAL_AUTH_OK) { r->code = started; return; }  /* no callback will come */
    pthread_mutex_lock(&r->lock);
    while (!r->done) pthread_cond_wait(&r->changed, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

static void on_done(void *user_data, const portal_auth_error *error) {
    finish(user_data, error);
}

static void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    reply *r = user_data;
    /* The result is lent for the callback: copy and retain what is needed after it. */
    r->kind = result ? portal_auth_result_kind(result) : 0;
    if (r->kind == PORTAL_AUTH_RESULT_TOTP_REQUIRED) {
        r->user_jwt = copy(portal_auth_result_user_jwt(result));
        r->totp_link = copy(portal_auth_result_totp_link(result));
    } else if (r->kind == PORTAL_AUTH_RESULT_AUTHENTICATED) {
        r->session = portal_auth_session_retain(portal_auth_result_session(result));
    }
    finish(r, error);
}

static void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    reply *r = user_data;
    r->session = portal_auth_session_retain(session);
    finish(r, error);
}

typedef struct {
    reply reply;
    portal_auth_forward_result outcome;
} forward_reply;

static void on_forwarded(void *user_data, portal_auth_forward_result outcome, const portal_auth_error *error) {
    forward_reply *f = user_data;
    f->outcome = outcome;
    finish(&f->reply, error);
}

/* Reports a failed call on stderr, with what the user does next when the error has a
   reason; returns its exit status. */
static int failed(const char *what, const reply *r) {
    const char *next = portal_auth_reason_user_message(r->reason);
    if (next) fprintf(stderr, "%s\n", next);
    if (r->code == PORTAL_AUTH_E_INVALID_ARGUMENT && r->name)
        fprintf(stderr, "%s: %s failed: %s (%s)\n", program, what, r->message ? r->message : "invalid argument", r->name);
    else if (r->message)
        fprintf(stderr, "%s: %s failed: %s\n", program, what, r->message);
    else
        fprintf(stderr, "%s: %s failed: the library refused the call (error %d)\n", program, what, (int)r->code);
    return EXIT_LIBRARY + (int)r->code;
}

/* Waits for a call that completes with nothing but an error, and forgets it: 0, or the exit
   status of its failure. */
static int await_done(const char *what, reply *r, portal_auth_code started) {
    await_reply(r, started);
    int status = r->code == PORTAL_AUTH_OK ? 0 : failed(what, r);
    reply_clear(r);
    return status;
}

/* ---- The terminal ---- */

/* Standard input, read into a buffer of the program's own (not stdio's), so that a wait can
   watch it and a callback at once: what has arrived and is not a whole line yet. */
static char *input;
static size_t input_length, input_capacity;
static int input_ended_already;

/* Moves the first whole line of the buffer into *line (without its end); 0 when there is none. */
static int take_line(char **line, size_t *capacity) {
    char *end = input_length ? memchr(input, '\n', input_length) : NULL;
    if (!end && !(input_ended_already && input_length)) return 0;
    size_t length = end ? (size_t)(end - input) : input_length;
    if (*capacity < length + 1) {
        char *bigger = realloc(*line, length + 1);
        if (!bigger) abort();
        *line = bigger;
        *capacity = length + 1;
    }
    memcpy(*line, input, length);
    (*line)[length] = 0;
    if (length > 0 && (*line)[length - 1] == '\r') (*line)[length - 1] = 0;
    size_t used = end ? length + 1 : length;
    memmove(input, input + used, input_length - used);
    input_length -= used;
    return 1;
}

/* Reads what standard input has (blocking until something comes); 0 once it has ended. */
static int read_input(void) {
    if (input_ended_already) return 0;
    if (input_capacity - input_length < 4096) {
        char *bigger = realloc(input, input_capacity + 8192);
        if (!bigger) abort();
        input = bigger;
        input_capacity += 8192;
    }
    ssize_t count = read(0, input + input_length, input_capacity - input_length);
    if (count <= 0) {
        input_ended_already = 1;
        return 0;
    }
    input_length += (size_t)count;
    return 1;
}

/* One line into *line (without its end); 0 when input ended first. */
static int read_line(char **line, size_t *capacity) {
    while (!take_line(line, capacity))
        if (!read_input() && !input_length) return 0;
    return 1;
}

/* Shows `prompt` and reads one line into *line (without its end); 0 when input ended. */
static int ask(const char *prompt, char **line, size_t *capacity) {
    fputs(prompt, stdout);
    fflush(stdout);
    return read_line(line, capacity);
}

enum { GOT_REPLY, GOT_LINE, INPUT_ENDED };

/* Waits for `r`'s callback or a line on standard input, whichever comes first: GOT_REPLY,
   GOT_LINE (in *line), or INPUT_ENDED the first time input ends (after that, it waits for
   the callback alone). */
static int await_reply_or_line(reply *r, char **line, size_t *capacity) {
    for (;;) {
        if (is_done(r)) return GOT_REPLY;
        if (take_line(line, capacity)) return GOT_LINE;
        struct pollfd watched[2] = { { .fd = wake_pipe[0], .events = POLLIN }, { .fd = 0, .events = POLLIN } };
        if (poll(watched, input_ended_already ? 1 : 2, -1) < 0) continue;
        if (watched[0].revents) {
            char drained[64];
            if (read(wake_pipe[0], drained, sizeof drained) < 0) { /* another wake took it */ }
        }
        if (!input_ended_already && watched[1].revents && !read_input() && !input_length) return INPUT_ENDED;
    }
}

static int input_ended(void) {
    fprintf(stderr, "\n%s: input ended before the sign-in did; nothing was stored\n", program);
    return EXIT_INPUT_ENDED;
}

static void signed_in(const portal_auth_session *session) {
    printf("Signed in as %s.\n", portal_auth_session_end_user_id(session));
    fflush(stdout);
}

/* The first TOTP step of a user carries the enrollment link: draw its QR code and show the
   secret, for the user's authenticator app. Nothing of it is logged. */
static void show_enrollment(const char *link) {
    char *text = NULL, *secret = NULL;
    portal_auth_error *error = NULL;
    printf("Two-step verification: scan this code with your authenticator app,\n");
    if (portal_auth_totp_qr_terminal(link, PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK, &text, &error) == PORTAL_AUTH_OK) {
        fputs(text, stdout);
    } else {
        printf("(the QR code cannot be drawn: %s)\n", portal_auth_error_message(error));
        portal_auth_error_free(error);
    }
    if (portal_auth_totp_secret(link, &secret, NULL) == PORTAL_AUTH_OK && secret)
        printf("or enter this key in it by hand: %s\n", secret);
    portal_auth_string_free(secret);
    portal_auth_string_free(text);
}

/* Takes a redirect's outcome to a session: the TOTP step if there is one. Consumes `step`. */
static int complete(portal_auth *client, reply *step) {
    if (step->kind == PORTAL_AUTH_RESULT_AUTHENTICATED) {
        signed_in(step->session);
        reply_clear(step);
        return 0;
    }
    if (step->totp_link) show_enrollment(step->totp_link);
    char *line = NULL;
    size_t capacity = 0;
    int status = 0;
    for (int attempt = 1;; attempt++) {
        if (!ask("Code from your authenticator app: ", &line, &capacity)) { status = input_ended(); break; }
        /* "123 456" as the app shows it; anything but six digits is asked again, unsent. */
        char code[PORTAL_AUTH_TOTP_CODE_SIZE];
        if (!portal_auth_totp_code_normalize(line, code)) {
            printf("The code is six digits.\n");
            attempt--;
            continue;
        }
        reply verified;
        reply_init(&verified);
        await_reply(&verified, portal_auth_verify_totp(client, code, step->user_jwt, on_result, &verified, NULL));
        if (verified.code == PORTAL_AUTH_OK) {
            signed_in(verified.session);
        } else if (verified.reason == PORTAL_AUTH_REASON_TOTP_CODE_REJECTED && attempt < TOTP_ATTEMPTS) {
            printf("%s\n", portal_auth_reason_user_message(verified.reason));
            reply_clear(&verified);
            continue;
        } else {
            status = failed("verifying the code", &verified);
        }
        reply_clear(&verified);
        break;
    }
    free(line);
    reply_clear(step);
    return status;
}

/* ---- The commands ---- */

/* Listening for the redirects the app's URL handler forwards (a custom-scheme redirect URL):
   the first sign-in redirect's outcome, and whether the last call came. */
typedef struct {
    reply outcome;
    int ended;       /* under outcome.lock */
} listening;

static void on_forwarded_redirect(void *user_data, const portal_auth_result *result, const portal_auth_error *error,
                                  portal_auth_bool last) {
    listening *l = user_data;
    if (last == PORTAL_AUTH_TRUE) {
        pthread_mutex_lock(&l->outcome.lock);
        l->ended = 1;
        pthread_cond_broadcast(&l->outcome.changed);
        pthread_mutex_unlock(&l->outcome.lock);
        wake_main();
        return;
    }
    /* Not a sign-in redirect, or one after the first: nothing to do. Calls come one at a time. */
    if ((!result && !error) || is_done(&l->outcome)) return;
    on_result(&l->outcome, result, error);
}

/* Ends listening and waits for its last call (after which `l` may go). */
static void stop_listening(listening *l, portal_auth_call *call) {
    portal_auth_call_cancel(call);
    pthread_mutex_lock(&l->outcome.lock);
    while (!l->ended) pthread_cond_wait(&l->outcome.changed, &l->outcome.lock);
    pthread_mutex_unlock(&l->outcome.lock);
    portal_auth_call_free(call);
}

enum { NOT_A_SIGN_IN_LINK = -1 };

/* A line pasted at the Link: prompt: NOT_A_SIGN_IN_LINK when it is none (the prompt is shown
   again), else the sign-in's exit status, once `stop(wait)` has ended the other wait. */
static int pasted(portal_auth *client, const char *line, void (*stop)(void *), void *wait) {
    reply step;
    reply_init(&step);
    await_reply(&step, portal_auth_handle_redirect(client, line, on_result, &step, NULL));
    if (step.code == PORTAL_AUTH_OK && step.kind == 0) {   /* not a sign-in redirect of this app: nothing was sent */
        reply_clear(&step);
        printf("That is not a sign-in link of this app. Link: ");
        fflush(stdout);
        return NOT_A_SIGN_IN_LINK;
    }
    stop(wait);
    if (step.code != PORTAL_AUTH_OK) {
        int status = failed("signing in", &step);
        reply_clear(&step);
        return status;
    }
    return complete(client, &step);
}

typedef struct {
    listening *listening;
    portal_auth_call *call;
} listened;

static void stop_listened(void *data) {
    listened *l = data;
    stop_listening(l->listening, l->call);
}

/* A custom-scheme redirect URL: sends the link, and listens for the app's URL handler to
   forward it here (the desktop starts the handler when the user opens the link); pasting it
   works too. Input ending ends the wait. */
static int sign_in_through_the_url_handler(portal_auth *client, const char *email, char **line, size_t *capacity) {
    reply sent;
    reply_init(&sent);
    int status = await_done("sending the sign-in link", &sent, portal_auth_send_magic_link(client, email, on_done, &sent, NULL));
    if (status != 0) return status;
    listening l = {0};
    reply_init(&l.outcome);
    listened stop = { &l, NULL };
    if (portal_auth_listen_for_redirects(client, on_forwarded_redirect, &l, &stop.call) != PORTAL_AUTH_OK) abort();
    for (;;) {
        /* Input may have ended while the library was finding out that the redirect URL is
           not loopback. */
        int got = input_ended_already && !input_length ? INPUT_ENDED : await_reply_or_line(&l.outcome, line, capacity);
        if (got == INPUT_ENDED) {
            stop_listened(&stop);
            status = input_ended();
            break;
        }
        if (got == GOT_REPLY) {
            stop_listened(&stop);
            printf("\n");
            if (l.outcome.code != PORTAL_AUTH_OK) {
                status = failed("signing in", &l.outcome);
                break;
            }
            return complete(client, &l.outcome);
        }
        if ((status = pasted(client, *line, stop_listened, &stop)) != NOT_A_SIGN_IN_LINK) break;
    }
    reply_clear(&l.outcome);
    return status;
}

typedef struct {
    reply *signing;
    portal_auth_call *call;
} signing_in;

/* Ends the magic-link sign-in: its callback comes (the pasted link's outcome, or closed). */
static void stop_signing_in(void *data) {
    signing_in *s = data;
    portal_auth_call_cancel(s->call);
    await_reply(s->signing, PORTAL_AUTH_OK);
}

static int sign_in_by_magic_link(portal_auth *client, int32_t timeout_ms) {
    char *email = NULL, *line = NULL;
    size_t email_capacity = 0, capacity = 0;
    if (!ask("Email: ", &email, &email_capacity)) { free(email); return input_ended(); }
    /* In one call with a loopback redirect URL: the browser the user opens the link in brings
       it back here, and the program finishes by itself. */
    reply signing;
    reply_init(&signing);
    signing_in stop = { &signing, NULL };
    portal_auth_code started = portal_auth_sign_in_with_magic_link(client, email, timeout_ms, on_result, &signing, &stop.call);
    printf("A sign-in link is on its way to %s. Open it, or paste it here.\nLink: ", email);
    fflush(stdout);
    int status, consumed = 0;
    if (started != PORTAL_AUTH_OK) {
        await_reply(&signing, started);
        status = failed("signing in by magic link", &signing);
    } else {
        for (;;) {
            int got = await_reply_or_line(&signing, &line, &capacity);
            if (got == INPUT_ENDED) continue;   /* nothing to paste: the browser may still come */
            if (got == GOT_LINE) {
                if ((status = pasted(client, line, stop_signing_in, &stop)) != NOT_A_SIGN_IN_LINK) break;
                continue;
            }
            if (signing.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && signing.reason == PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK) {
                /* A custom-scheme redirect URL: nothing was sent yet. */
                status = sign_in_through_the_url_handler(client, email, &line, &capacity);
                break;
            }
            printf("\n");
            if (signing.code != PORTAL_AUTH_OK) {
                status = failed("signing in by magic link", &signing);
                break;
            }
            consumed = 1;
            status = complete(client, &signing);
            break;
        }
    }
    portal_auth_call_free(stop.call);
    if (!consumed) reply_clear(&signing);
    free(email);
    free(line);
    return status;
}

/* The app's URL handler: the desktop started this program with the redirect URL. It goes to
   the running portal-auth-login of this environment, or, when none runs, signs in here. */
static int sign_in_with_redirect(const portal_auth_options *options, portal_auth *client, const char *url) {
    forward_reply forwarded;
    reply_init(&forwarded.reply);
    await_reply(&forwarded.reply, portal_auth_forward_redirect(options, url, on_forwarded, &forwarded));
    int status = -1;
    if (forwarded.reply.code == PORTAL_AUTH_OK && forwarded.outcome == PORTAL_AUTH_FORWARD_TAKEN) {
        printf("Handed the sign-in to the running %s.\n", program);
        status = 0;
    } else if (forwarded.reply.code == PORTAL_AUTH_OK && forwarded.outcome == PORTAL_AUTH_FORWARD_REFUSED) {
        fprintf(stderr, "%s: that is not a sign-in link of this app (its redirect URL is another)\n", program);
        status = EXIT_NOT_A_SIGN_IN_LINK;
    } else if (forwarded.reply.code == PORTAL_AUTH_OK) {
        printf("No %s is running for this environment; signing in here.\n", program);
    } else if (forwarded.reply.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE &&
               forwarded.reply.reason != PORTAL_AUTH_REASON_CHANNEL_FAILED) {
        /* No channel here, so no running program could have taken it either. */
        fprintf(stderr, "%s: cannot reach a running %s (%s); signing in here\n", program, program, forwarded.reply.message);
    } else {
        /* The running program may still handle it: not here too. */
        status = failed("handing the sign-in to the running program", &forwarded.reply);
    }
    reply_clear(&forwarded.reply);
    if (status >= 0) return status;

    reply step;
    reply_init(&step);
    await_reply(&step, portal_auth_handle_redirect(client, url, on_result, &step, NULL));
    if (step.code != PORTAL_AUTH_OK || step.kind == 0) {
        int failure = step.code != PORTAL_AUTH_OK ? failed("signing in", &step) : EXIT_NOT_A_SIGN_IN_LINK;
        if (step.code == PORTAL_AUTH_OK)
            fprintf(stderr, "%s: that is not a sign-in link of this app (its redirect URL is another)\n", program);
        reply_clear(&step);
        return failure;
    }
    return complete(client, &step);
}

/* Started by D-Bus activation: the desktop is handing this program the redirect it opened,
   on the session bus (org.freedesktop.Application.Open), which listening serves. */
static int sign_in_when_opened(portal_auth *client, int32_t timeout_ms) {
    listening l = {0};
    reply_init(&l.outcome);
    listened stop = { &l, NULL };
    if (portal_auth_listen_for_redirects(client, on_forwarded_redirect, &l, &stop.call) != PORTAL_AUTH_OK) abort();
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (timeout_ms ? timeout_ms : 60000) / 1000;
    pthread_mutex_lock(&l.outcome.lock);
    int timed_out = 0;
    while (!l.outcome.done && !timed_out) timed_out = pthread_cond_timedwait(&l.outcome.changed, &l.outcome.lock, &deadline) != 0;
    int opened = l.outcome.done;
    pthread_mutex_unlock(&l.outcome.lock);
    stop_listened(&stop);
    int status;
    if (!opened) {
        fprintf(stderr, "%s: no sign-in redirect was opened\n", program);
        status = EXIT_NOTHING_OPENED;
    } else if (l.outcome.code != PORTAL_AUTH_OK) {
        status = failed("signing in", &l.outcome);
    } else {
        return complete(client, &l.outcome);
    }
    reply_clear(&l.outcome);
    return status;
}

static void nothing_to_stop(void *data) { (void)data; }

/* Nothing waits but the user: lines pasted at the Link: prompt until one is a sign-in
   redirect of this app. */
static int sign_in_by_pasting(portal_auth *client) {
    char *line = NULL;
    size_t capacity = 0;
    int status;
    do {
        if (!read_line(&line, &capacity)) { status = input_ended(); break; }
    } while ((status = pasted(client, line, nothing_to_stop, NULL)) == NOT_A_SIGN_IN_LINK);
    free(line);
    return status;
}

static int sign_in_with_browser(portal_auth *client, const char *provider, int32_t timeout_ms) {
    int google = strcmp(provider, "google") == 0;
    printf("Opening your browser to sign in with %s; waiting for it to come back.\n", google ? "Google" : "Apple");
    fflush(stdout);
    reply step;
    reply_init(&step);
    await_reply(&step, google ? portal_auth_sign_in_with_google(client, timeout_ms, on_result, &step, NULL)
                              : portal_auth_sign_in_with_apple(client, timeout_ms, on_result, &step, NULL));
    if (step.code == PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE && step.reason == PORTAL_AUTH_REASON_NO_BROWSER && step.url) {
        /* No browser here (over SSH): the user opens the address elsewhere; the browser then
           lands on this machine's loopback address, which is not there, and the address it
           shows is pasted back. */
        printf("No browser can be opened here. Open this address in a browser:\n%s\n"
               "Then paste the address the browser ends on.\nLink: ", step.url);
        fflush(stdout);
        reply_clear(&step);
        return sign_in_by_pasting(client);
    }
    if (step.code != PORTAL_AUTH_OK) {
        int status = failed("signing in in the browser", &step);
        reply_clear(&step);
        return status;
    }
    return complete(client, &step);
}

static int restore(portal_auth *client) {
    reply restored;
    reply_init(&restored);
    await_reply(&restored, portal_auth_restore_session(client, on_session, &restored, NULL));
    int status = 0;
    if (restored.code != PORTAL_AUTH_OK) {
        status = failed("reading the stored session", &restored);
    } else if (!restored.session) {
        printf("Not signed in.\n");
        status = EXIT_NOT_SIGNED_IN;
    } else {
        signed_in(restored.session);
    }
    reply_clear(&restored);
    return status;
}

static int sign_out(portal_auth *client) {
    /* Invalidating the stored session forgets its token and deletes it from the keyring;
       clearing afterwards also forgets the client's memory of its last grant. */
    reply restored;
    reply_init(&restored);
    await_reply(&restored, portal_auth_restore_session(client, on_session, &restored, NULL));
    if (restored.code != PORTAL_AUTH_OK) {
        int status = failed("reading the stored session", &restored);
        reply_clear(&restored);
        return status;
    }
    const char *end_user_id = restored.session ? portal_auth_session_end_user_id(restored.session) : NULL;
    char *who = copy(end_user_id);
    int status = 0;
    if (restored.session) {
        reply invalidated;
        reply_init(&invalidated);
        status = await_done("signing out", &invalidated,
                            portal_auth_session_invalidate(restored.session, on_done, &invalidated, NULL));
    }
    if (status == 0) {
        reply cleared;
        reply_init(&cleared);
        status = await_done("signing out", &cleared, portal_auth_clear_persisted_session(client, on_done, &cleared, NULL));
    }
    if (status == 0) {
        if (who) printf("Signed out %s.\n", who);
        else printf("Not signed in; nothing to sign out.\n");
    }
    free(who);
    reply_clear(&restored);
    return status;
}

/* ---- The command line ---- */

typedef struct {
    const char *environment, *api_host, *redirect_url, *from_email, *template_id, *application_id;
    const char *redirect, *browser;
    int32_t timeout_ms;
    int restore, sign_out, activated;
} arguments;

static int usage_error(const char *problem, const char *what) {
    fprintf(stderr, "%s: %s%s\nTry '%s --help'.\n", program, problem, what ? what : "", program);
    return EXIT_USAGE;
}

/* Parses argv into *a; returns -1 to go on, else an exit status. */
static int parse(int argc, char **argv, arguments *a) {
    *a = (arguments){ .redirect_url = "myapp://auth/callback" };
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--help") == 0) { usage(stdout); return 0; }
        if (strcmp(option, "--restore") == 0) { a->restore = 1; continue; }
        if (strcmp(option, "--sign-out") == 0) { a->sign_out = 1; continue; }
        if (strcmp(option, "--activated") == 0) { a->activated = 1; continue; }
        const char **value = strcmp(option, "--environment") == 0 ? &a->environment
            : strcmp(option, "--api-host") == 0 ? &a->api_host
            : strcmp(option, "--redirect-url") == 0 ? &a->redirect_url
            : strcmp(option, "--from-email") == 0 ? &a->from_email
            : strcmp(option, "--template-id") == 0 ? &a->template_id
            : strcmp(option, "--application-id") == 0 ? &a->application_id
            : strcmp(option, "--redirect") == 0 ? &a->redirect
            : strcmp(option, "--browser") == 0 ? &a->browser
            : NULL;
        int is_timeout = strcmp(option, "--timeout") == 0;
        if (!value && !is_timeout) return usage_error("unknown option ", option);
        if (i + 1 >= argc) return usage_error("a value is missing after ", option);
        const char *text = argv[++i];
        if (value) { *value = text; continue; }
        char *end = NULL;
        long seconds = strtol(text, &end, 10);
        if (end == text || *end || seconds < 1 || seconds > INT32_MAX / 1000)
            return usage_error("--timeout takes a whole number of seconds from 1, not ", text);
        a->timeout_ms = (int32_t)(seconds * 1000);
    }
    if (!a->environment) return usage_error("--environment is required", NULL);
    if ((a->redirect != NULL) + (a->browser != NULL) + a->restore + a->sign_out + a->activated > 1)
        return usage_error("use one of --redirect, --activated, --browser, --restore and --sign-out", NULL);
    if (a->activated && !a->application_id) return usage_error("--activated needs --application-id", NULL);
    if (a->browser && strcmp(a->browser, "google") != 0 && strcmp(a->browser, "apple") != 0)
        return usage_error("--browser takes google or apple, not ", a->browser);
    if (a->timeout_ms && (a->redirect || a->restore || a->sign_out))
        return usage_error("--timeout goes with --browser, --activated or a magic link", NULL);
    return -1;
}

int main(int argc, char **argv) {
    arguments a;
    int status = parse(argc, argv, &a);
    if (status >= 0) return status;

    portal_auth_options options;
    portal_auth_options_init(&options, sizeof options);
    options.auth_environment_id = a.environment;
    options.redirect_url = a.redirect_url;
    options.api_host = a.api_host;
    options.magic_link_from_email = a.from_email;
    options.magic_link_template_id = a.template_id;
    options.application_id = a.application_id;
    portal_auth *client = NULL;
    portal_auth_error *error = NULL;
    portal_auth_code code = portal_auth_new(&options, &client, &error);
    if (code != PORTAL_AUTH_OK) {
        const char *name = portal_auth_error_name(error);
        fprintf(stderr, "%s: %s%s%s%s\n", program, portal_auth_error_message(error),
                name ? " (" : "", name ? name : "", name ? ")" : "");
        portal_auth_error_free(error);
        return EXIT_LIBRARY + (int)code;
    }

    /* The callbacks' wake-up of a wait that also watches standard input. */
    if (pipe(wake_pipe) != 0) { perror(program); portal_auth_free(client); return EXIT_LIBRARY + PORTAL_AUTH_E_INTERNAL; }
    for (int i = 0; i < 2; i++) {
        fcntl(wake_pipe[i], F_SETFL, O_NONBLOCK);
        fcntl(wake_pipe[i], F_SETFD, FD_CLOEXEC);
    }

    if (a.restore) status = restore(client);
    else if (a.sign_out) status = sign_out(client);
    else if (a.redirect) status = sign_in_with_redirect(&options, client, a.redirect);
    else if (a.activated) status = sign_in_when_opened(client, a.timeout_ms);
    else if (a.browser) status = sign_in_with_browser(client, a.browser, a.timeout_ms);
    else status = sign_in_by_magic_link(client, a.timeout_ms);

    portal_auth_free(client);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    free(input);
    return status;
}
