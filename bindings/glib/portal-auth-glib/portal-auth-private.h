/* What the library's files share and do not export. */
#pragma once

#include <portal_auth.h>

#include "portal-auth-glib.h"

G_BEGIN_DECLS

/* Errors (portal-auth-error.c): a GError of the C library's error, which is borrowed;
   PORTAL_AUTH_E_CANCELLED becomes G_IO_ERROR_CANCELLED, as GIO reports a cancelled call. */
GError *portal_auth_glib_error_new (const portal_auth_error *error);
/* The failure of a synchronous call of the C library, which is taken, into `error`. */
void portal_auth_glib_propagate (GError **error, portal_auth_error *failure);
/* The C library refused a call before it started (it does for a NULL or non-UTF-8 string):
   PORTAL_AUTH_ERROR_INVALID_ARGUMENT naming `name`. */
GError *portal_auth_glib_error_new_invalid_argument (const char *name);

/* Results (portal-auth-methods.c, portal-auth-result.c): GObjects copied from what the C
   library lends to a callback. */
PortalAuthMethods *portal_auth_glib_methods_new (const portal_auth_methods *methods);
PortalAuthResult *portal_auth_glib_result_new (const portal_auth_result *result);

/* Sessions (portal-auth-session.c). One GObject per C session handle, as the C library keeps
   one handle per session: a replayed redirect hands back the very object. `session` is
   lent; the GObject retains it. Any thread. */
PortalAuthSession *portal_auth_glib_session_wrap (portal_auth_session *session);
/* The client whose call handed the session out last, told when the session is invalidated.
   On the client's context. */
void portal_auth_glib_session_set_lender (PortalAuthSession *session, PortalAuthClient *client);
/* Told by a session the client handed out that it was invalidated (portal-auth-client.c). */
void portal_auth_glib_client_session_invalidated (PortalAuthClient *client, PortalAuthSession *session);

/* The completion queue (portal-auth-completions.c): while a call started from `context` is in
   flight, that context watches the queue's descriptor and runs the completions. */
gboolean portal_auth_glib_completions_hold (GMainContext *context, GError **error);
void portal_auth_glib_completions_release (GMainContext *context);

/* Calls (portal-auth-call.c): a call of the C library in flight for a GTask. Its C callback
   (one of the portal_auth_glib_call_on_* below, with the PortalAuthCall as user_data) keeps
   the outcome, and the task returns it on its own context. */
typedef struct _PortalAuthCall PortalAuthCall;

typedef enum { PORTAL_AUTH_CALL_RETURNS_BOOLEAN, PORTAL_AUTH_CALL_RETURNS_POINTER } PortalAuthCallReturns;

/* Who is done with a call first: its starter, or its C callback (which may run on another
   thread before the starting C function has even returned). */
enum { PORTAL_AUTH_CALL_STARTING, PORTAL_AUTH_CALL_STARTED, PORTAL_AUTH_CALL_COMPLETED_EARLY };

struct _PortalAuthCall {
    GTask *task;
    PortalAuthCallReturns returns;
    portal_auth_call *handle;
    /* Atomic, PORTAL_AUTH_CALL_*: the call returns (and is freed) only once its starter is done
       with it (portal_auth_glib_call_started), whichever of the two comes last. */
    int gate;
    gulong cancelled_id;
    /* The outcome, left by the C callback. */
    GError *error;
    gpointer value;
    GDestroyNotify value_free;
    /* Called on the task's context just before the task returns; may be NULL. */
    void (*returning) (PortalAuthCall *call);
    /* Listening (portal_auth_glib_call_on_redirect): called on the task's context with each
       forwarded redirect's outcome, before the task returns; `result` and `error` are lent. */
    void (*forwarded) (PortalAuthCall *call, PortalAuthResult *result, const GError *error);
    /* For portal-auth-client.c's bookkeeping. */
    PortalAuthClient *client;
    gboolean owns_client_reference;
};

/* A call for `task` (which it takes), or NULL with `task` already returned with the error
   when the completion queue cannot be watched. */
PortalAuthCall *portal_auth_glib_call_new (GTask *task, PortalAuthCallReturns returns);
/* After the C call returned `started`: on success the call waits for its callback, and its
   cancellable now cancels it; else (the C library refused an argument) the task returns
   PORTAL_AUTH_ERROR_INVALID_ARGUMENT naming `argument`, and the call is freed. */
void portal_auth_glib_call_started (PortalAuthCall *call, portal_auth_code started, const char *argument);

void portal_auth_glib_call_on_done (void *user_data, const portal_auth_error *error);
void portal_auth_glib_call_on_methods (void *user_data, const portal_auth_methods *methods,
                                       const portal_auth_error *error);
void portal_auth_glib_call_on_url (void *user_data, const char *url, const portal_auth_error *error);
void portal_auth_glib_call_on_result (void *user_data, const portal_auth_result *result,
                                      const portal_auth_error *error);
void portal_auth_glib_call_on_session (void *user_data, portal_auth_session *session,
                                       const portal_auth_error *error);
/* Listening: each outcome before the last goes to the call's `forwarded`; the last (an error
   always) is the call's. */
void portal_auth_glib_call_on_redirect (void *user_data, const portal_auth_result *result,
                                        const portal_auth_error *error, portal_auth_bool last);

/* Logging (portal-auth-log.c): the C library's lines to g_log, installed once. */
void portal_auth_glib_log_install (void);

/* Secrets (portal-auth-secrets.c): a library-owned copy is cleared before it is freed. */
void portal_auth_glib_wipe_free (char *secret);

G_END_DECLS
