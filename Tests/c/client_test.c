/* C tests of the client handle and the error model, built against the installed-style
 * header and run against libportalauth.so (under valgrind by scripts/test-c.sh). Named cases
 * (test_support.h's run_cases). */
#include "test_support.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static portal_auth_options valid_options(void) {
    portal_auth_options options;
    portal_auth_options_init(&options, sizeof options);
    options.auth_environment_id = "env-demo";
    options.redirect_url = "myapp://auth/callback";
    options.api_host = "127.0.0.1:9";
    options.storage = PORTAL_AUTH_STORAGE_MEMORY;
    return options;
}

/* portal_auth_new must fail with INVALID_ARGUMENT naming `name`, and leave no client. */
static void expect_invalid(const portal_auth_options *options, const char *name) {
    portal_auth *client = (portal_auth *)1;
    portal_auth_error *error = NULL;
    portal_auth_code code = portal_auth_new(options, &client, &error);
    CHECK(code == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(client == NULL);
    CHECK(error != NULL && portal_auth_error_code(error) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    const char *got = portal_auth_error_name(error);
    CHECK(got != NULL && strcmp(got, name) == 0);
    if (got == NULL || strcmp(got, name) != 0) fprintf(stderr, "  expected name %s, got %s\n", name, got ? got : "NULL");
    /* The message names the field as C spells it, as the name does. */
    const char *message = portal_auth_error_message(error);
    CHECK(message != NULL && strstr(message, name) != NULL);
    CHECK(message == NULL || (strstr(message, "authEnvironmentId") == NULL && strstr(message, "redirectUrl") == NULL
                              && strstr(message, "apiHost") == NULL));
    if (message && !strstr(message, name)) fprintf(stderr, "  message %s does not name %s\n", message, name);
    CHECK(portal_auth_error_path(error) == NULL && portal_auth_error_missing(error) == NULL);
    CHECK(portal_auth_error_detail(error) == NULL && portal_auth_error_method(error) == NULL);
    CHECK(portal_auth_error_http_status(error) == 0 && portal_auth_error_body(error) == NULL);
    CHECK(portal_auth_error_reason(error) == PORTAL_AUTH_REASON_NONE);
    portal_auth_error_free(error);
}

static void on_url(void *user_data, const char *url, const portal_auth_error *error) {
    (void)url;
    (void)error;
    count_call(user_data);
}

/* The query of the one request (for an authorize URL) that a client of the emulator sends
   with is_account_abstracted set to `abstracted`. */
static void sent_query(portal_auth_tristate abstracted, char *query, size_t size) {
    portal_auth_options options = emulator_options("env-demo");
    options.is_account_abstracted = abstracted;
    portal_auth *client = NULL;
    int calls = 0;
    query[0] = 0;
    clear_requests();
    CHECK(portal_auth_new(&options, &client, NULL) == PORTAL_AUTH_OK);
    if (!client) return;
    CHECK(portal_auth_login_with_google(client, on_url, &calls, NULL) == PORTAL_AUTH_OK);
    wait_calls(&calls);
    portal_auth_free(client);
    char answer[8192];
    emulator_request("/_emulator/requests", NULL, answer, sizeof answer);
    json_string(answer, "query", query, size);
}

/* Defaults and size: every default is zero (the struct is a zeroed one given its size), the
   initialiser macro sets the same, and the size a caller gives is respected. */
static void options_defaults_and_sizes(void) {
    portal_auth_options options;
    memset(&options, 0x5a, sizeof options);
    portal_auth_options_init(&options, sizeof options);
    CHECK(options.size == sizeof(portal_auth_options));
    CHECK(options.auth_environment_id == NULL && options.api_host == NULL);
    CHECK(options.is_account_abstracted == PORTAL_AUTH_UNSET && options.storage == PORTAL_AUTH_STORAGE_KEYRING);
    CHECK(options.connect_timeout_ms == 0 && options.request_timeout_ms == 0);
    /* Every default is zero: the struct is a zeroed one given its size. */
    portal_auth_options zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    zeroed.size = sizeof zeroed;
    CHECK(memcmp(&options, &zeroed, sizeof zeroed) == 0);
    portal_auth_options_init(NULL, sizeof options);
    /* The initialiser macro sets the same defaults. */
    portal_auth_options initialised = PORTAL_AUTH_OPTIONS_INIT;
    CHECK(initialised.size == options.size && initialised.auth_environment_id == options.auth_environment_id);
    CHECK(initialised.redirect_url == options.redirect_url && initialised.api_host == options.api_host);
    CHECK(initialised.magic_link_from_email == options.magic_link_from_email);
    CHECK(initialised.magic_link_template_id == options.magic_link_template_id);
    CHECK(initialised.is_account_abstracted == options.is_account_abstracted && initialised.storage == options.storage);
    CHECK(initialised.connect_timeout_ms == options.connect_timeout_ms);
    CHECK(initialised.request_timeout_ms == options.request_timeout_ms && initialised.host_storage == options.host_storage);
    CHECK(initialised.application_id == options.application_id && initialised.file_storage_path == options.file_storage_path);
    CHECK(initialised.keyring_prompt_timeout_ms == options.keyring_prompt_timeout_ms);
    CHECK(initialised.completion_queue == options.completion_queue);
    /* An older caller's shorter struct: nothing written past its size. A newer caller's
       longer one: the bytes this library does not know are zeroed. */
    union { portal_auth_options options; unsigned char bytes[sizeof(portal_auth_options) + 16]; } raw;
    size_t older = offsetof(portal_auth_options, connect_timeout_ms);
    memset(&raw, 0x5a, sizeof raw);
    portal_auth_options_init(&raw.options, older);
    CHECK(raw.options.size == older && raw.options.storage == PORTAL_AUTH_STORAGE_KEYRING);
    CHECK(raw.bytes[older] == 0x5a && raw.bytes[sizeof raw - 1] == 0x5a);
    memset(&raw, 0x5a, sizeof raw);
    portal_auth_options_init(&raw.options, sizeof raw);
    CHECK(raw.options.size == sizeof raw && raw.options.host_storage == NULL);
    CHECK(raw.bytes[sizeof(portal_auth_options)] == 0 && raw.bytes[sizeof raw - 1] == 0);
    memset(&raw, 0x5a, sizeof raw);
    portal_auth_options_init(&raw.options, 1);
    CHECK(raw.bytes[0] == 0x5a);
}

/* A client, and its free; a timeout of zero or less is the default, never an error. */
static void client_made_and_freed(void) {
    portal_auth_options good = valid_options();
    good.magic_link_from_email = "hello@auth.example.com";
    good.magic_link_template_id = "tmpl";
    good.is_account_abstracted = PORTAL_AUTH_YES;
    good.request_timeout_ms = 5000;
    portal_auth *client = NULL;
    portal_auth_error *error = NULL;
    CHECK(portal_auth_new(&good, &client, &error) == PORTAL_AUTH_OK);
    CHECK(client != NULL && error == NULL);
    portal_auth_free(client);
    portal_auth_free(NULL);
    good.connect_timeout_ms = -1;
    good.request_timeout_ms = INT32_MIN;
    CHECK(portal_auth_new(&good, &client, NULL) == PORTAL_AUTH_OK);
    portal_auth_free(client);
}

/* A caller built against an older, shorter struct: later fields take their defaults. */
static void older_struct_takes_defaults(void) {
    portal_auth *client = NULL;
    portal_auth_options old = valid_options();
    old.size = offsetof(portal_auth_options, is_account_abstracted);
    old.storage = (portal_auth_storage_kind)12345; /* beyond the caller's size: never read */
    CHECK(portal_auth_new(&old, &client, NULL) == PORTAL_AUTH_OK);
    portal_auth_free(client);
}

/* Bad input: a clear error each time, never a crash. */
static void bad_options_named(void) {
    expect_invalid(NULL, "options");
    portal_auth_options bad = valid_options();
    bad.size = 0;
    expect_invalid(&bad, "options");

    bad = valid_options();
    bad.auth_environment_id = NULL;
    bad.redirect_url = "";
    expect_invalid(&bad, "auth_environment_id"); /* checked first */
    bad.auth_environment_id = " \t";
    expect_invalid(&bad, "auth_environment_id");
    bad.auth_environment_id = "env\xff\xfe";
    expect_invalid(&bad, "auth_environment_id");

    bad = valid_options();
    bad.redirect_url = "   ";
    expect_invalid(&bad, "redirect_url");
    bad.redirect_url = NULL;
    expect_invalid(&bad, "redirect_url");

    bad = valid_options();
    bad.api_host = "bad host";
    expect_invalid(&bad, "api_host");
    bad.api_host = "\xc3\x28";
    expect_invalid(&bad, "api_host");

    bad = valid_options();
    bad.magic_link_from_email = "hello@auth.example.com";
    expect_invalid(&bad, "magic_link_template_id");

    bad = valid_options();
    bad.is_account_abstracted = (portal_auth_tristate)7;
    expect_invalid(&bad, "is_account_abstracted");

    bad = valid_options();
    bad.storage = (portal_auth_storage_kind)-3;
    expect_invalid(&bad, "storage");
}

/* YES and NO are sent; unset sends nothing, and so does -1, PORTAL_AUTH_UNSET in earlier
   headers (a program built against one). */
static void account_abstraction_sent_only_when_set(void) {
    char query[512];
    sent_query(PORTAL_AUTH_YES, query, sizeof query);
    CHECK(strstr(query, "isAccountAbstracted=true") != NULL);
    sent_query(PORTAL_AUTH_NO, query, sizeof query);
    CHECK(strstr(query, "isAccountAbstracted=false") != NULL);
    sent_query(PORTAL_AUTH_UNSET, query, sizeof query);
    CHECK(strstr(query, "redirectUrl=") != NULL && strstr(query, "isAccountAbstracted") == NULL);
    sent_query((portal_auth_tristate)-1, query, sizeof query);
    CHECK(strstr(query, "redirectUrl=") != NULL && strstr(query, "isAccountAbstracted") == NULL);
}

/* The application id: a reverse-DNS name, appended to the struct (an older caller's struct
   ends before it and names none). */
static void application_id_is_a_reverse_dns_name(void) {
    portal_auth *client = NULL;
    portal_auth_options good = valid_options();
    good.application_id = "com.example.App";
    CHECK(portal_auth_new(&good, &client, NULL) == PORTAL_AUTH_OK);
    portal_auth_free(client);
    portal_auth_options old = valid_options();
    old.size = offsetof(portal_auth_options, application_id);
    old.application_id = "not a name"; /* beyond the caller's size: never read */
    CHECK(portal_auth_new(&old, &client, NULL) == PORTAL_AUTH_OK);
    portal_auth_free(client);
    const char *not_names[] = { "", "app", "com.", "com..example", "com.9example", "com.exa mple", "com.example/App", "com.\xc3\x28" };
    for (size_t i = 0; i < sizeof not_names / sizeof not_names[0]; i++) {
        portal_auth_options bad = valid_options();
        bad.application_id = not_names[i];
        expect_invalid(&bad, "application_id");
    }
}

/* No place for the client: an error, and no leak; no place for the error either: the code
   alone. */
static void no_place_for_the_client(void) {
    portal_auth *client = NULL;
    portal_auth_error *error = NULL;
    portal_auth_options good = valid_options();
    CHECK(portal_auth_new(&good, NULL, &error) == PORTAL_AUTH_E_INVALID_ARGUMENT);
    CHECK(error != NULL && strcmp(portal_auth_error_name(error), "out_client") == 0);
    portal_auth_error_free(error);
    CHECK(portal_auth_new(NULL, &client, NULL) == PORTAL_AUTH_E_INVALID_ARGUMENT && client == NULL);
}

static void accessors_of_a_null_error(void) {
    CHECK(portal_auth_error_code(NULL) == PORTAL_AUTH_E_INTERNAL);
    CHECK(portal_auth_error_message(NULL) == NULL && portal_auth_error_name(NULL) == NULL);
    CHECK(portal_auth_error_http_status(NULL) == 0);
    CHECK(portal_auth_error_body(NULL) == NULL && portal_auth_error_reason(NULL) == PORTAL_AUTH_REASON_NONE);
    portal_auth_error_free(NULL);
}

static const test_case cases[] = {
    { "options_defaults_and_sizes", options_defaults_and_sizes, NULL },
    { "client_made_and_freed", client_made_and_freed, NULL },
    { "older_struct_takes_defaults", older_struct_takes_defaults, NULL },
    { "bad_options_named", bad_options_named, NULL },
    { "account_abstraction_sent_only_when_set", account_abstraction_sent_only_when_set, NULL },
    { "application_id_is_a_reverse_dns_name", application_id_is_a_reverse_dns_name, NULL },
    { "no_place_for_the_client", no_place_for_the_client, NULL },
    { "accessors_of_a_null_error", accessors_of_a_null_error, NULL },
};

int main(int argc, char **argv) {
    return RUN_EMULATOR_CASES(argc, argv, "client_test", cases);
}
