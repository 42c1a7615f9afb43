/*
 * portal_auth.hpp: libportalauth for C++17, header-only, over the C header portal_auth.h,
 * which stays the manual for what each call does. `make install` puts this file beside it,
 * so the flags of `pkg-config --cflags --libs portal-auth` build both.
 *
 * What this layer adds, and nothing more:
 * - handles that free themselves: portal::auth::Client (move-only), Session (copying it
 *   retains the library's session, destroying it releases it), Call (frees its handle);
 * - completions as callables: each asynchronous call takes a Done<T>, a
 *   std::function<void(Outcome<T>)>, called exactly once, where the client's completion
 *   model says (the C header's "Completion models"), never inside the starting call;
 * - values where the C side lends: results, methods and errors are copied into
 *   std::string and std::vector before the callback that lent them returns;
 * - errors as portal::auth::Error, which carries the code, the reason, the message and
 *   every field of the C error (name, path, missing, detail, method, HTTP status, body,
 *   retry-after), and is an exception where exceptions are enabled.
 *
 * Every call that can fail has two forms:
 * - f(std::nothrow, args...) returns an Outcome<T>: the value, or the Error. It is the
 *   primitive, declared with and without exceptions; Client::create(options) and
 *   CompletionQueue::create() stand for the constructors. An asynchronous call's
 *   Outcome<Call> is an error only when the library refuses to start it (its completion is
 *   then never called); otherwise its completion receives the outcome;
 * - f(args...) returns the value and throws the Error: the std::nothrow form's value(),
 *   declared only with exceptions, like the constructors, Outcome::value() and the
 *   completion exception handler.
 * A program built with -fno-exceptions (as KDE's ECM builds by default; detected with
 * __cpp_exceptions and __EXCEPTIONS, PORTAL_AUTH_HPP_EXCEPTIONS says which) uses the
 * std::nothrow forms and reads an Outcome with error() first, then *outcome, outcome->
 * or value_or() (* and -> on an error end the program). Build every file of one program
 * that includes this header the same way: its inline functions differ between the two,
 * and a program keeps one copy of each.
 *
 * Callables run on the library's terms, and no exception of theirs crosses the library's C
 * frames (where it would end the program through std::terminate):
 * - an exception that escapes a completion (a Done<T>, listen_for_redirects' callables,
 *   forward_redirect's done), say one that calls outcome.value() on an error, or a
 *   dispatcher is caught by this layer and handed, as a std::exception_ptr, to the
 *   process's completion exception handler (set_completion_exception_handler), on the
 *   thread the completion ran on. The default handler, log_completion_exception(), reports
 *   it as one line at LogLevel::error, "A completion threw: " and its what(), to the log
 *   handler installed with set_log_handler or set_queued_log_handler (on that same thread),
 *   or to stderr when none is installed; nothing with set_log_level(LogLevel::none). The
 *   call is over all the same: its completion is not called again;
 * - an exception from a log handler is dropped, with its line;
 * - a browser opener or a session store may throw, which counts as its failure (without
 *   exceptions, an opener returns its failure and a store calls SessionStore::fail()).
 *
 * Secrets: the copies this layer makes of a secret are Secret strings, std::strings that
 * overwrite their bytes with zeros before their memory is freed, as the C library does
 * with its own (portal_auth.h, "Secrets in memory"): a TotpRequired's user_jwt and
 * totp_link, the values a SessionStore gets and is given as they pass through, a typed
 * TOTP code being tidied; and so are the secret strings it returns: Session::token(),
 * totp_secret(), totp_qr_svg() and totp_qr_terminal() (TotpRequired's too). Not wiped: a
 * std::string the app copies or moves out of a Secret (the app's own), and the PNG bytes
 * and QrMatrix of a QR code (std::vectors: clear them yourself).
 *
 * Strings passed in are copied by the library; one holding a NUL byte cannot cross into C
 * and is refused as Code::invalid_argument, named as C names the argument.
 *
 * Adding a call of the C header takes a few lines: an asynchronous one is a Client (or
 * Session) member that hands start() a lambda calling the C function with one of the
 * trampolines of namespace detail (on_done, on_url, on_methods, on_result, on_session, or
 * one more of the same shape for a new callback type); a synchronous one calls the C
 * function and returns detail::failure()'s error or the value. Either is its std::nothrow
 * form; its throwing form is one line in the block of throwing forms that follows.
 */
#ifndef PORTAL_AUTH_HPP
#define PORTAL_AUTH_HPP

#if __cplusplus < 201703L
#error "portal_auth.hpp needs C++17 (-std=c++17; in CMake, link PortalAuth::PortalAuthCpp)"
#endif

#include <portal_auth.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

/* 1 when this file is compiled with exceptions; 0 with -fno-exceptions, when only the
   std::nothrow forms are declared. */
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define PORTAL_AUTH_HPP_EXCEPTIONS 1
#else
#define PORTAL_AUTH_HPP_EXCEPTIONS 0
#endif

namespace portal::auth {

/* ---- Codes and reasons ------------------------------------------------------------------ */

/* Code: the stable codes of portal_auth_code. Reason: which storage failure, unavailable
   sign-in, closed sign-in, refusal (Code::unauthorized) or network failure an error was, so
   that an app can choose what its user does next (portal_auth_reason). A value this header
   does not name (a later library's) is still a value of its type: treat a reason it does
   not name as the error's code alone. */
/* BEGIN codes and reasons generated by scripts/generate-tables.py: do not edit */
enum class Code : std::int32_t {
    ok = PORTAL_AUTH_OK,
    invalid_argument = PORTAL_AUTH_E_INVALID_ARGUMENT,
    magic_link_not_configured = PORTAL_AUTH_E_MAGIC_LINK_NOT_CONFIGURED,
    auth_method_unavailable = PORTAL_AUTH_E_AUTH_METHOD_UNAVAILABLE,
    authentication_failed = PORTAL_AUTH_E_AUTHENTICATION_FAILED,
    malformed_response = PORTAL_AUTH_E_MALFORMED_RESPONSE,
    invalid_grant_response = PORTAL_AUTH_E_INVALID_GRANT_RESPONSE,
    invalid_user_jwt = PORTAL_AUTH_E_INVALID_USER_JWT,
    session_storage_failure = PORTAL_AUTH_E_SESSION_STORAGE_FAILURE,
    account_abstraction_unavailable = PORTAL_AUTH_E_ACCOUNT_ABSTRACTION_UNAVAILABLE,
    rate_limited = PORTAL_AUTH_E_RATE_LIMITED,
    totp_qr_unavailable = PORTAL_AUTH_E_TOTP_QR_UNAVAILABLE,
    unauthorized = PORTAL_AUTH_E_UNAUTHORIZED,
    http_status = PORTAL_AUTH_E_HTTP_STATUS,
    network = PORTAL_AUTH_E_NETWORK,
    session_invalidated = PORTAL_AUTH_E_SESSION_INVALIDATED,
    cancelled = PORTAL_AUTH_E_CANCELLED,
    sign_in_closed = PORTAL_AUTH_E_SIGN_IN_CLOSED,
    sign_in_unavailable = PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE,
    sign_in_in_progress = PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS,
    sign_in_callback_incomplete = PORTAL_AUTH_E_SIGN_IN_CALLBACK_INCOMPLETE,
    internal = PORTAL_AUTH_E_INTERNAL
};

enum class Reason : std::int32_t {
    none = PORTAL_AUTH_REASON_NONE,
    keyring_locked = PORTAL_AUTH_REASON_KEYRING_LOCKED,
    no_secret_service = PORTAL_AUTH_REASON_NO_SECRET_SERVICE,
    no_session_bus = PORTAL_AUTH_REASON_NO_SESSION_BUS,
    dbus_failure = PORTAL_AUTH_REASON_DBUS_FAILURE,
    libsecret_missing = PORTAL_AUTH_REASON_LIBSECRET_MISSING,
    host_storage_failed = PORTAL_AUTH_REASON_HOST_STORAGE_FAILED,
    entry_not_cleared = PORTAL_AUTH_REASON_ENTRY_NOT_CLEARED,
    keyring_needs_confirmation = PORTAL_AUTH_REASON_KEYRING_NEEDS_CONFIRMATION,
    keyring_prompt_dismissed = PORTAL_AUTH_REASON_KEYRING_PROMPT_DISMISSED,
    keyring_encryption_failed = PORTAL_AUTH_REASON_KEYRING_ENCRYPTION_FAILED,
    file_store_unsafe = PORTAL_AUTH_REASON_FILE_STORE_UNSAFE,
    file_store_failed = PORTAL_AUTH_REASON_FILE_STORE_FAILED,
    redirect_not_loopback = PORTAL_AUTH_REASON_REDIRECT_NOT_LOOPBACK,
    port_in_use = PORTAL_AUTH_REASON_PORT_IN_USE,
    listener_failed = PORTAL_AUTH_REASON_LISTENER_FAILED,
    no_browser = PORTAL_AUTH_REASON_NO_BROWSER,
    opener_failed = PORTAL_AUTH_REASON_OPENER_FAILED,
    no_runtime_directory = PORTAL_AUTH_REASON_NO_RUNTIME_DIRECTORY,
    runtime_directory_unsafe = PORTAL_AUTH_REASON_RUNTIME_DIRECTORY_UNSAFE,
    channel_in_use = PORTAL_AUTH_REASON_CHANNEL_IN_USE,
    channel_failed = PORTAL_AUTH_REASON_CHANNEL_FAILED,
    redirect_address_unavailable = PORTAL_AUTH_REASON_REDIRECT_ADDRESS_UNAVAILABLE,
    sign_in_cancelled = PORTAL_AUTH_REASON_SIGN_IN_CANCELLED,
    sign_in_timed_out = PORTAL_AUTH_REASON_SIGN_IN_TIMED_OUT,
    client_closed = PORTAL_AUTH_REASON_CLIENT_CLOSED,
    link_used = PORTAL_AUTH_REASON_LINK_USED,
    totp_code_rejected = PORTAL_AUTH_REASON_TOTP_CODE_REJECTED,
    totp_step_expired = PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED,
    outcome_unknown = PORTAL_AUTH_REASON_OUTCOME_UNKNOWN,
    totp_step_used = PORTAL_AUTH_REASON_TOTP_STEP_USED,
    certificate_untrusted = PORTAL_AUTH_REASON_CERTIFICATE_UNTRUSTED,
    certificate_expired = PORTAL_AUTH_REASON_CERTIFICATE_EXPIRED,
    certificate_not_yet_valid = PORTAL_AUTH_REASON_CERTIFICATE_NOT_YET_VALID,
    certificate_wrong_host = PORTAL_AUTH_REASON_CERTIFICATE_WRONG_HOST,
    ca_file_unusable = PORTAL_AUTH_REASON_CA_FILE_UNUSABLE,
    tls_failed = PORTAL_AUTH_REASON_TLS_FAILED,
    proxy_auth_required = PORTAL_AUTH_REASON_PROXY_AUTH_REQUIRED,
    proxy_refused = PORTAL_AUTH_REASON_PROXY_REFUSED,
    proxy_unreachable = PORTAL_AUTH_REASON_PROXY_UNREACHABLE,
    name_not_resolved = PORTAL_AUTH_REASON_NAME_NOT_RESOLVED,
    connection_refused = PORTAL_AUTH_REASON_CONNECTION_REFUSED,
    connection_reset = PORTAL_AUTH_REASON_CONNECTION_RESET,
    connect_timed_out = PORTAL_AUTH_REASON_CONNECT_TIMED_OUT,
    request_timed_out = PORTAL_AUTH_REASON_REQUEST_TIMED_OUT,
    response_too_large = PORTAL_AUTH_REASON_RESPONSE_TOO_LARGE,
    libcurl_missing = PORTAL_AUTH_REASON_LIBCURL_MISSING,
    network_failed = PORTAL_AUTH_REASON_NETWORK_FAILED
};
/* END codes and reasons generated */

/* A reason's name as the C header spells it after PORTAL_AUTH_REASON_ ("KEYRING_LOCKED"), to
   log or to key an app's own translations by (portal_auth_reason_name); nullopt for
   Reason::none and a value the library does not know. Static storage. */
inline std::optional<std::string_view> reason_name(Reason reason) noexcept {
    const char *name = portal_auth_reason_name(static_cast<portal_auth_reason>(reason));
    return name ? std::optional<std::string_view>(name) : std::nullopt;
}

/* A reason's one-line sentence for the user, to show as it is
   (portal_auth_reason_user_message); Error::what() is the developer's. nullopt for
   Reason::none and a value the library does not know. Static storage. */
inline std::optional<std::string_view> reason_user_message(Reason reason) noexcept {
    const char *message = portal_auth_reason_user_message(static_cast<portal_auth_reason>(reason));
    return message ? std::optional<std::string_view>(message) : std::nullopt;
}

/* A code's name as the C header spells it after PORTAL_AUTH_E_ ("UNAUTHORIZED"; "OK" for
   Code::ok), and what it means in a sentence for the developer (portal_auth_code_name,
   portal_auth_code_message); nullopt for a value the library does not know. Static storage. */
inline std::optional<std::string_view> code_name(Code code) noexcept {
    const char *name = portal_auth_code_name(static_cast<portal_auth_code>(code));
    return name ? std::optional<std::string_view>(name) : std::nullopt;
}

inline std::optional<std::string_view> code_message(Code code) noexcept {
    const char *message = portal_auth_code_message(static_cast<portal_auth_code>(code));
    return message ? std::optional<std::string_view>(message) : std::nullopt;
}

/* ---- Secrets ---------------------------------------------------------------------------- */

namespace detail {

/* Overwrites size bytes with zeros through volatile stores, which the compiler cannot drop as
   dead before the memory is freed. */
inline void wipe(void *bytes, std::size_t size) noexcept {
    volatile unsigned char *at = static_cast<unsigned char *>(bytes);
    for (std::size_t i = 0; i < size; i++) at[i] = 0;
}

/* Overwrites all that text's buffer holds, its spare capacity included (where a longer value
   may have left bytes). */
inline void wipe(std::string &text) noexcept {
    text.resize(text.capacity());
    wipe(text.data(), text.size());
}

} // namespace detail

/* A copy of a secret: a std::string whose bytes are overwritten with zeros before its memory
   is freed or reused, when it is destroyed or assigned to. It is a std::string for all else:
   pass it where one is taken, compare it, print it. Not wiped: a std::string copied or moved
   out of it (the app's own), and the buffer that growing it in place (append, reserve) may
   free; keep it as it came. */
class Secret : public std::string {
public:
    using std::string::string;
    Secret() noexcept = default;
    Secret(const std::string &text) : std::string(text) {}
    /* Takes text's buffer, and wipes what the move leaves in text (a short string keeps its
       bytes inside the object). */
    Secret(std::string &&text) noexcept : std::string(std::move(text)) { detail::wipe(text); }
    Secret(const Secret &other) = default;
    Secret(Secret &&other) noexcept = default;
    Secret &operator=(const Secret &other) {
        if (this != &other) {
            detail::wipe(*this);
            std::string::operator=(other);
        }
        return *this;
    }
    Secret &operator=(Secret &&other) noexcept {
        if (this != &other) {
            detail::wipe(*this);
            std::string::operator=(std::move(other));
        }
        return *this;
    }
    ~Secret() { detail::wipe(*this); }
};

/* ---- Errors ----------------------------------------------------------------------------- */

/* The fields of an error: each is set only for the codes the C header names it for. */
struct ErrorFields {
    Reason reason = Reason::none;
    std::optional<std::string> name;    /* invalid_argument: the argument, as C spells it */
    std::optional<std::string> path;    /* malformed_response: the endpoint's path */
    std::optional<std::string> missing; /* malformed_response: the missing field, if one */
    std::optional<std::string> detail;  /* authentication_failed, invalid_user_jwt, ... */
    std::optional<std::string> method;  /* auth_method_unavailable: "GOOGLE" or "APPLE" */
    std::optional<std::string> body;    /* http_status: the server's reason, for developers */
    std::optional<std::string> url;     /* sign_in_unavailable, no_browser: the URL to show */
    std::int32_t http_status = 0;       /* unauthorized, http_status; 0: no response */
    /* rate_limited, http_status: the delay the server asked for (Retry-After), in seconds */
    std::optional<std::int64_t> retry_after;
};

/* What went wrong: what() is the library's message, a sentence for the user, which never
   holds a secret. A std::runtime_error, thrown by the throwing forms where exceptions are
   enabled; without them, a value an Outcome carries. */
class Error : public std::runtime_error {
public:
    Error(Code code, const std::string &message, ErrorFields fields = {})
        : std::runtime_error(message), code_(code), fields_(std::move(fields)) {}

    /* A copy of an error the library lends (to a callback) or owns. */
    static Error copy(const portal_auth_error *error) {
        ErrorFields fields;
        fields.reason = static_cast<Reason>(portal_auth_error_reason(error));
        fields.name = text(portal_auth_error_name(error));
        fields.path = text(portal_auth_error_path(error));
        fields.missing = text(portal_auth_error_missing(error));
        fields.detail = text(portal_auth_error_detail(error));
        fields.method = text(portal_auth_error_method(error));
        fields.body = text(portal_auth_error_body(error));
        fields.url = text(portal_auth_error_url(error));
        fields.http_status = portal_auth_error_http_status(error);
        std::int64_t delay = portal_auth_error_retry_after(error); /* -1: none */
        if (delay >= 0) fields.retry_after = delay;
        return Error(static_cast<Code>(portal_auth_error_code(error)),
                     text(portal_auth_error_message(error)).value_or(""), std::move(fields));
    }

    Code code() const noexcept { return code_; }
    std::string message() const { return what(); }
    /* Which failure it was: for session_storage_failure, sign_in_unavailable,
       sign_in_closed, network (certificate_untrusted, connection_refused, ...; docs/network.md)
       and unauthorized (link_used, totp_code_rejected, totp_step_expired; none when the call
       cannot tell). */
    Reason reason() const noexcept { return fields_.reason; }
    const std::optional<std::string> &name() const noexcept { return fields_.name; }
    const std::optional<std::string> &path() const noexcept { return fields_.path; }
    const std::optional<std::string> &missing() const noexcept { return fields_.missing; }
    const std::optional<std::string> &detail() const noexcept { return fields_.detail; }
    const std::optional<std::string> &method() const noexcept { return fields_.method; }
    const std::optional<std::string> &body() const noexcept { return fields_.body; }
    /* sign_in_unavailable with Reason::no_browser, from a browser sign-in: the authorize URL
       no browser could open, to show the user (portal_auth_error_url). */
    const std::optional<std::string> &url() const noexcept { return fields_.url; }
    std::int32_t http_status() const noexcept { return fields_.http_status; }
    /* rate_limited and http_status: the delay the server asked for before another attempt
       (its Retry-After), in seconds; nullopt when it named none. Nothing is retried by the
       library (portal_auth_error_retry_after). */
    std::optional<std::int64_t> retry_after() const noexcept { return fields_.retry_after; }

private:
    static std::optional<std::string> text(const char *borrowed) {
        return borrowed ? std::optional<std::string>(borrowed) : std::nullopt;
    }

    Code code_;
    ErrorFields fields_;
};

/* What a call completed with (or, for an asynchronous call's start, began with): its value,
   or an Error, not to be ignored. Check before reading: `if (const Error *error =
   outcome.error())`, else *outcome. */
template <typename Value>
class [[nodiscard]] Outcome {
public:
    Outcome(Value value) : state_(std::in_place_index<0>, std::move(value)) {}
    Outcome(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }
    /* The error; nullptr on success. */
    const Error *error() const noexcept { return std::get_if<1>(&state_); }
    /* The value, after ok() (the way to read it without exceptions): on an error there is
       none, and the program ends (std::abort). */
    Value &operator*() & noexcept { return held(*this); }
    const Value &operator*() const & noexcept { return held(*this); }
    Value &&operator*() && noexcept { return std::move(held(*this)); }
    Value *operator->() noexcept { return &held(*this); }
    const Value *operator->() const noexcept { return &held(*this); }
    /* The value, or fallback on an error. */
    template <typename Fallback>
    Value value_or(Fallback &&fallback) const & {
        return ok() ? **this : static_cast<Value>(std::forward<Fallback>(fallback));
    }
    template <typename Fallback>
    Value value_or(Fallback &&fallback) && {
        return ok() ? std::move(**this) : static_cast<Value>(std::forward<Fallback>(fallback));
    }
#if PORTAL_AUTH_HPP_EXCEPTIONS
    /* The value; throws the Error when the call failed. Only with exceptions. */
    Value &value() & { return *throw_failure(*this); }
    const Value &value() const & { return *throw_failure(*this); }
    Value &&value() && { return *std::move(throw_failure(*this)); }
#endif

private:
    template <typename Self>
    static auto &held(Self &self) noexcept {
        auto *value = std::get_if<0>(&self.state_);
        if (!value) std::abort();
        return *value;
    }
#if PORTAL_AUTH_HPP_EXCEPTIONS
    template <typename Self>
    static Self &throw_failure(Self &self) {
        if (const Error *failed = self.error()) throw *failed;
        return self;
    }
#endif

    std::variant<Value, Error> state_;
};

/* The outcome of a call that has no value. */
template <>
class [[nodiscard]] Outcome<void> {
public:
    Outcome() = default;
    Outcome(Error error) : error_(std::move(error)) {}

    bool ok() const noexcept { return !error_; }
    explicit operator bool() const noexcept { return ok(); }
    const Error *error() const noexcept { return error_ ? &*error_ : nullptr; }
#if PORTAL_AUTH_HPP_EXCEPTIONS
    /* Throws the Error when the call failed. Only with exceptions. */
    void value() const {
        if (error_) throw *error_;
    }
#endif

private:
    std::optional<Error> error_;
};

/* The completion of an asynchronous call: called exactly once. An exception it throws is
   caught and handed to the completion exception handler. */
template <typename Value>
using Done = std::function<void(Outcome<Value>)>;

#if PORTAL_AUTH_HPP_EXCEPTIONS
/* Receives an exception that escaped a completion or a dispatcher (caught by this layer),
   on the thread it ran on. An exception the handler throws in turn is dropped. Only with
   exceptions: without, nothing escapes. */
using CompletionExceptionHandler = std::function<void(std::exception_ptr exception)>;

/* The process's completion exception handler; an empty one: the default,
   log_completion_exception. Defined with the logging below. */
inline void set_completion_exception_handler(CompletionExceptionHandler handler);

/* The default completion exception handler: one line at LogLevel::error, "A completion
   threw: " and the exception's what(), to the installed log handler, or to stderr when none
   is installed; nothing after set_log_level(LogLevel::none). A handler of the host's may
   call it too. */
inline void log_completion_exception(std::exception_ptr exception) noexcept;
#endif

namespace detail {

#if PORTAL_AUTH_HPP_EXCEPTIONS
/* Hands the exception being handled (inside a catch block) to the completion exception
   handler. */
inline void completion_threw() noexcept;

/* Runs run, a callable of the host's, inside a C callback, where no exception may leave:
   what it returns, or, when it throws, what threw() returns, called while the exception is
   being handled. The one place that catches what the host's callables throw. */
template <typename Run, typename Threw>
auto shielded(Run run, Threw threw) noexcept -> decltype(run()) {
    try {
        return run();
    } catch (...) {
        return threw();
    }
}

/* Runs a completion or a dispatcher: what it throws goes to the completion exception
   handler. */
template <typename Run>
void shielded_completion(Run run) noexcept {
    shielded(run, completion_threw);
}
#else
/* Without exceptions the host's callables throw nothing: run runs, and there is nothing to
   catch. */
template <typename Run, typename Threw>
auto shielded(Run run, Threw) noexcept -> decltype(run()) {
    return run();
}

template <typename Run>
void shielded_completion(Run run) noexcept {
    run();
}
#endif

} // namespace detail

/* ---- Calls ------------------------------------------------------------------------------ */

/* One asynchronous call, to cancel it. Destroying it frees the handle and cancels nothing:
   the completion still comes. */
class Call {
public:
    Call() noexcept = default;
    explicit Call(portal_auth_call *raw) noexcept : raw_(raw) {}
    Call(Call &&other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    Call &operator=(Call &&other) noexcept {
        std::swap(raw_, other.raw_);
        return *this;
    }
    Call(const Call &) = delete;
    Call &operator=(const Call &) = delete;
    ~Call() { portal_auth_call_free(raw_); }

    /* Asks the call to stop: honoured only before its request is on the wire (a grant sent is
       spent, so that exchange completes and persists its session). The completion then
       carries Code::cancelled (Code::sign_in_closed for a browser sign-in). */
    void cancel() const noexcept { portal_auth_call_cancel(raw_); }
    portal_auth_call *raw() const noexcept { return raw_; }

private:
    portal_auth_call *raw_ = nullptr;
};

namespace detail {

/* The handles the library gives the caller, freed by their own function. */
struct FreeError {
    void operator()(portal_auth_error *error) const noexcept { portal_auth_error_free(error); }
};
struct FreeString {
    void operator()(char *text) const noexcept { portal_auth_string_free(text); }
};
struct FreeBytes {
    void operator()(std::uint8_t *bytes) const noexcept { portal_auth_bytes_free(bytes); }
};
using OwnedError = std::unique_ptr<portal_auth_error, FreeError>;
using OwnedString = std::unique_ptr<char, FreeString>;
using OwnedBytes = std::unique_ptr<std::uint8_t, FreeBytes>;

/* A code the library returned without an error handle (a call it refused to start). */
inline Error refused(portal_auth_code code) {
    return Error(static_cast<Code>(code), "The library refused the call (error " + std::to_string(code) + ").");
}

/* The error of a C call that returned code, nullopt when it succeeded; takes (and frees) the
   error handle that came with it. */
inline std::optional<Error> failure(portal_auth_code code, portal_auth_error *error = nullptr) {
    OwnedError owned(error);
    if (code == PORTAL_AUTH_OK) return std::nullopt;
    return owned ? Error::copy(owned.get()) : refused(code);
}

/* The same, as the outcome of a call with no value. */
inline Outcome<void> outcome(portal_auth_code code, portal_auth_error *error = nullptr) {
    std::optional<Error> failed = failure(code, error);
    return failed ? Outcome<void>(std::move(*failed)) : Outcome<void>();
}

/* An argument the layer refuses before C sees it, by the name C gives it. */
inline Error invalid_argument(const char *name, const char *problem) {
    ErrorFields fields;
    fields.name = name;
    return Error(Code::invalid_argument, std::string("Invalid argument: ") + name + problem, std::move(fields));
}

/* An empty callable where the library needs one. */
inline Error empty_callable(const char *name) { return invalid_argument(name, " is empty."); }

/* The C strings of one call's arguments. A string holding a NUL byte cannot cross into C (C
   would read only its start): the first one is refused. */
class CStrings {
public:
    const char *operator()(const std::string &text, const char *name) {
        if (!refused_ && text.find('\0') != std::string::npos) refused_ = invalid_argument(name, " contains a NUL byte.");
        return text.c_str();
    }
    const char *operator()(const std::optional<std::string> &text, const char *name) {
        return text ? (*this)(*text, name) : nullptr;
    }
    /* The refusal, nullptr when every string can cross. */
    const Error *refused() const noexcept { return refused_ ? &*refused_ : nullptr; }

private:
    std::optional<Error> refused_;
};

inline std::optional<std::string> copy(const char *borrowed) {
    return borrowed ? std::optional<std::string>(borrowed) : std::nullopt;
}

/* A string the library handed over (a call that succeeded), as a Secret; the library's copy
   wiped and freed. */
inline Secret take_text(char *text) {
    OwnedString owned(text);
    return Secret(owned.get());
}

/* A host callable the library calls through a pointer: shared by the client that installed
   it and by each call started while it was installed, as the library may call it until those
   complete. */
template <typename Function>
struct Box : std::enable_shared_from_this<Box<Function>> {
    explicit Box(Function held) : function(std::move(held)) {}
    Function function;
};

/* What a call keeps alive until it completes: the opener it started with. */
struct Keep {
    std::shared_ptr<void> opener;
};

template <typename Value>
struct Pending {
    Done<Value> done;
    Keep keep;
};

/* Starts a call: begin(user_data, out_call) calls the C function with owned as the user data,
   which the callback owns once the call started. When the library refuses it, owned is freed
   here and the callback never comes. */
template <typename Owned, typename Begin>
Outcome<Call> begin_call(std::unique_ptr<Owned> owned, Begin begin) {
    portal_auth_call *call = nullptr;
    if (std::optional<Error> failed = failure(begin(static_cast<void *>(owned.get()), &call))) return std::move(*failed);
    owned.release(); /* the callback owns it now */
    return Call(call);
}

/* Starts a call that completes through done. */
template <typename Value, typename Begin>
Outcome<Call> start(Done<Value> done, Keep keep, Begin begin) {
    if (!done) return empty_callable("done");
    return begin_call(std::make_unique<Pending<Value>>(Pending<Value>{std::move(done), std::move(keep)}), begin);
}

/* True on a thread while it runs a job destroyed unrun (Job): the completion is let go, not
   called. */
inline bool &discarding() noexcept {
    static thread_local bool flag = false;
    return flag;
}

/* The end of every call: its completion, then what it kept, let go. */
template <typename Value>
void complete(void *user_data, Outcome<Value> outcome) noexcept {
    std::unique_ptr<Pending<Value>> pending(static_cast<Pending<Value> *>(user_data));
    if (discarding()) return;
    shielded_completion([&] { pending->done(std::move(outcome)); });
}

/* The C callback of the calls that complete with nothing but an error. */
inline void on_done(void *user_data, const portal_auth_error *error) noexcept {
    complete<void>(user_data, error ? Outcome<void>(Error::copy(error)) : Outcome<void>());
}

inline void on_url(void *user_data, const char *url, const portal_auth_error *error) noexcept {
    complete<std::string>(user_data, error ? Outcome<std::string>(Error::copy(error))
                                           : Outcome<std::string>(std::string(url ? url : "")));
}

/* An answer the C header promises and the library did not give. */
inline Error lacking(const std::string &what) {
    return Error(Code::internal, "The library's answer lacked " + what + ".");
}

} // namespace detail

/* ---- Sessions --------------------------------------------------------------------------- */

/* A signed-in user: one reference to the library's session. Copies share it (one handle, so
   == tells whether two are the same session); the last one gone releases it. A session
   belongs to no client and outlives it. */
class Session {
public:
    /* Retains a session the C side lends (a callback's); nullopt for NULL. */
    static std::optional<Session> retain(portal_auth_session *lent) noexcept {
        portal_auth_session *raw = portal_auth_session_retain(lent);
        return raw ? std::optional<Session>(Session(raw)) : std::nullopt;
    }

    Session(const Session &other) noexcept : raw_(portal_auth_session_retain(other.raw_)) {}
    Session(Session &&other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    Session &operator=(Session other) noexcept {
        std::swap(raw_, other.raw_);
        return *this;
    }
    ~Session() { portal_auth_session_release(raw_); }

    /* The user's id: never secret, what to log and key per-user state on. */
    std::string end_user_id() const { return detail::copy(portal_auth_session_end_user_id(raw_)).value_or(""); }

    /* The Client Session Token, a secret (wiped when the Secret goes);
       Code::session_invalidated once invalidated. */
    Outcome<Secret> token(std::nothrow_t) const {
        char *token = nullptr;
        portal_auth_error *error = nullptr;
        portal_auth_code code = portal_auth_session_copy_token(raw_, &token, &error);
        if (std::optional<Error> failed = detail::failure(code, error)) return std::move(*failed);
        return detail::take_text(token);
    }

    /* Signs the user out here: the token is forgotten at once in every handle of it, then the
       persisted copy is deleted if it is still this token's (portal_auth_session_invalidate). */
    Outcome<Call> invalidate(std::nothrow_t, Done<void> done) const {
        return detail::start(std::move(done), {}, [this](void *data, portal_auth_call **call) {
            return portal_auth_session_invalidate(raw_, detail::on_done, data, call);
        });
    }

#if PORTAL_AUTH_HPP_EXCEPTIONS
    /* The throwing forms: each returns its std::nothrow form's value, or throws its Error. */
    Secret token() const { return token(std::nothrow).value(); }
    Call invalidate(Done<void> done) const { return invalidate(std::nothrow, std::move(done)).value(); }
#endif

    portal_auth_session *raw() const noexcept { return raw_; }
    friend bool operator==(const Session &a, const Session &b) noexcept { return a.raw_ == b.raw_; }
    friend bool operator!=(const Session &a, const Session &b) noexcept { return a.raw_ != b.raw_; }

private:
    explicit Session(portal_auth_session *retained) noexcept : raw_(retained) {}

    portal_auth_session *raw_;
};

/* ---- TOTP enrollment -------------------------------------------------------------------- */

/* The terminal a QR code is drawn for (portal_auth_terminal_colors). */
enum class TerminalColors {
    light_on_dark = PORTAL_AUTH_TERMINAL_LIGHT_ON_DARK,
    dark_on_light = PORTAL_AUTH_TERMINAL_DARK_ON_LIGHT
};

namespace detail {

/* A TOTP function of the C header, called on otpauth_url: make(url, &error) calls it and
   returns its code, then read() makes the value of what it stored (a failed call stores
   nothing). */
template <typename Make, typename Read>
auto totp_call(const std::string &otpauth_url, Make make, Read read) -> Outcome<decltype(read())> {
    CStrings strings;
    const char *url = strings(otpauth_url, "otpauth_url");
    if (const Error *refused = strings.refused()) return *refused;
    portal_auth_error *error = nullptr;
    portal_auth_code code = make(url, &error);
    if (std::optional<Error> failed = failure(code, error)) return std::move(*failed);
    return read();
}

/* A buffer the library handed over, copied; the library's wiped and freed. */
inline std::vector<std::uint8_t> take_bytes(std::uint8_t *bytes, std::size_t length) {
    OwnedBytes owned(bytes);
    return std::vector<std::uint8_t>(owned.get(), owned.get() + length);
}

} // namespace detail

/* The base32 secret of an enrollment link, for entry by hand; nullopt when it has none.
   Synchronous, as are the QR codes below; each carries the TOTP secret. */
inline Outcome<std::optional<Secret>> totp_secret(std::nothrow_t, const std::string &otpauth_url) {
    char *secret = nullptr;
    return detail::totp_call(
        otpauth_url, [&](const char *url, portal_auth_error **error) { return portal_auth_totp_secret(url, &secret, error); },
        [&] { return secret ? std::optional<Secret>(detail::take_text(secret)) : std::nullopt; });
}

/* What the user typed for a TOTP code, tidied for verify_totp (portal_auth_totp_code_normalize):
   the spaces and dashes authenticator apps show removed, the six digits; nullopt when
   anything else, or another number of digits, is left (ask the user again). Makes no
   request, and cannot fail. */
inline std::optional<std::string> normalize_totp_code(std::string_view typed) {
    Secret text(typed);
    if (text.find('\0') != std::string::npos) return std::nullopt; /* C would read only its start */
    char code[PORTAL_AUTH_TOTP_CODE_SIZE] = {};
    bool tidied = portal_auth_totp_code_normalize(text.c_str(), code) == PORTAL_AUTH_TRUE;
    std::optional<std::string> digits = tidied ? std::optional<std::string>(code) : std::nullopt;
    detail::wipe(code, sizeof code);
    return digits;
}

/* The enrollment link's QR code as a PNG, scale pixels a module (portal_auth_totp_qr_png). */
inline Outcome<std::vector<std::uint8_t>> totp_qr_png(std::nothrow_t, const std::string &otpauth_url,
                                                      std::int32_t scale = 10) {
    std::uint8_t *png = nullptr;
    std::size_t length = 0;
    return detail::totp_call(
        otpauth_url,
        [&](const char *url, portal_auth_error **error) { return portal_auth_totp_qr_png(url, scale, &png, &length, error); },
        [&] { return detail::take_bytes(png, length); });
}

/* The modules of an enrollment link's QR code, to paint at any scale (portal_auth_totp_qr_matrix):
   side modules a side, the quiet zone included. */
struct QrMatrix {
    std::int32_t side = 0;
    std::vector<std::uint8_t> bits; /* side rows of (side + 7) / 8 bytes, leftmost module in the high bit */

    /* Whether the module in row y, column x (from the top left) is dark. */
    bool dark(std::int32_t x, std::int32_t y) const {
        std::size_t row = static_cast<std::size_t>((side + 7) / 8) * static_cast<std::size_t>(y);
        return (bits[row + static_cast<std::size_t>(x / 8)] >> (7 - x % 8) & 1) != 0;
    }
};

inline Outcome<QrMatrix> totp_qr_matrix(std::nothrow_t, const std::string &otpauth_url) {
    std::int32_t side = 0;
    std::uint8_t *modules = nullptr;
    std::size_t length = 0;
    return detail::totp_call(
        otpauth_url,
        [&](const char *url, portal_auth_error **error) {
            return portal_auth_totp_qr_matrix(url, &side, &modules, &length, error);
        },
        [&] { return QrMatrix{side, detail::take_bytes(modules, length)}; });
}

/* The enrollment link's QR code as SVG text (portal_auth_totp_qr_svg). */
inline Outcome<Secret> totp_qr_svg(std::nothrow_t, const std::string &otpauth_url, std::int32_t scale = 10) {
    char *svg = nullptr;
    return detail::totp_call(
        otpauth_url, [&](const char *url, portal_auth_error **error) { return portal_auth_totp_qr_svg(url, scale, &svg, error); },
        [&] { return detail::take_text(svg); });
}

/* The enrollment link's QR code as text for a terminal (portal_auth_totp_qr_terminal). */
inline Outcome<Secret> totp_qr_terminal(std::nothrow_t, const std::string &otpauth_url,
                                        TerminalColors colors = TerminalColors::light_on_dark) {
    char *text = nullptr;
    return detail::totp_call(
        otpauth_url,
        [&](const char *url, portal_auth_error **error) {
            return portal_auth_totp_qr_terminal(url, static_cast<portal_auth_terminal_colors>(colors), &text, error);
        },
        [&] { return detail::take_text(text); });
}

#if PORTAL_AUTH_HPP_EXCEPTIONS
/* The throwing forms: each returns its std::nothrow form's value, or throws its Error. */
inline std::optional<Secret> totp_secret(const std::string &otpauth_url) {
    return totp_secret(std::nothrow, otpauth_url).value();
}
inline std::vector<std::uint8_t> totp_qr_png(const std::string &otpauth_url, std::int32_t scale = 10) {
    return totp_qr_png(std::nothrow, otpauth_url, scale).value();
}
inline QrMatrix totp_qr_matrix(const std::string &otpauth_url) { return totp_qr_matrix(std::nothrow, otpauth_url).value(); }
inline Secret totp_qr_svg(const std::string &otpauth_url, std::int32_t scale = 10) {
    return totp_qr_svg(std::nothrow, otpauth_url, scale).value();
}
inline Secret totp_qr_terminal(const std::string &otpauth_url, TerminalColors colors = TerminalColors::light_on_dark) {
    return totp_qr_terminal(std::nothrow, otpauth_url, colors).value();
}
#endif

/* ---- Results ---------------------------------------------------------------------------- */

/* The sign-in methods an environment has enabled. */
struct Methods {
    std::vector<std::string> allowed_auth_methods; /* "EMAIL_MAGIC_LINK", "GOOGLE", "APPLE" */
    bool auto_create_wallet = false;
};

/* Signed in: the session, already persisted. */
struct Authenticated {
    Session session;
    std::optional<std::string> client_id;         /* when the server sent it */
    std::optional<bool> is_account_abstracted;    /* nullopt when the server did not say */
};

/* One TOTP step away: verify_totp with the user's code and user_jwt. user_jwt and totp_link
   are secrets, wiped when the step goes: never log them. */
struct TotpRequired {
    Secret user_jwt;
    std::optional<Secret> totp_link; /* the enrollment link, on the first sign-in only */
    std::string end_user_id;         /* "" when the server did not send it */
    /* When the step expires, in seconds since the Unix epoch (portal_auth_result_totp_expires_at);
       0 when the userJwt carries no expiry. A code verified later is Reason::totp_step_expired. */
    std::int64_t expires_at = 0;

    /* The enrollment secret and QR codes of totp_link; without a link, the library's
       Code::totp_qr_unavailable (and no secret). */
    Outcome<std::optional<Secret>> totp_secret(std::nothrow_t) const {
        if (!totp_link) return std::optional<Secret>();
        return auth::totp_secret(std::nothrow, *totp_link);
    }
    Outcome<std::vector<std::uint8_t>> qr_png(std::nothrow_t, std::int32_t scale = 10) const {
        return totp_qr_png(std::nothrow, link(), scale);
    }
    Outcome<QrMatrix> qr_matrix(std::nothrow_t) const { return totp_qr_matrix(std::nothrow, link()); }
    Outcome<Secret> qr_svg(std::nothrow_t, std::int32_t scale = 10) const {
        return totp_qr_svg(std::nothrow, link(), scale);
    }
    Outcome<Secret> qr_terminal(std::nothrow_t, TerminalColors colors = TerminalColors::light_on_dark) const {
        return totp_qr_terminal(std::nothrow, link(), colors);
    }

#if PORTAL_AUTH_HPP_EXCEPTIONS
    /* The throwing forms: each returns its std::nothrow form's value, or throws its Error. */
    std::optional<Secret> totp_secret() const { return totp_secret(std::nothrow).value(); }
    std::vector<std::uint8_t> qr_png(std::int32_t scale = 10) const { return qr_png(std::nothrow, scale).value(); }
    QrMatrix qr_matrix() const { return qr_matrix(std::nothrow).value(); }
    Secret qr_svg(std::int32_t scale = 10) const { return qr_svg(std::nothrow, scale).value(); }
    Secret qr_terminal(TerminalColors colors = TerminalColors::light_on_dark) const {
        return qr_terminal(std::nothrow, colors).value();
    }
#endif

private:
    /* The link, or "" (which the library refuses as Code::totp_qr_unavailable): the secret
       itself, not a copy of it. */
    const std::string &link() const noexcept {
        static const std::string none;
        return totp_link ? *totp_link : none;
    }
};

/* Where a redirect, a browser sign-in or a TOTP code left the user. */
using Result = std::variant<Authenticated, TotpRequired>;

namespace detail {

inline void on_methods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) noexcept {
    if (error) return complete<Methods>(user_data, Error::copy(error));
    Methods copied;
    for (std::size_t i = 0, count = portal_auth_methods_count(methods); i < count; i++)
        copied.allowed_auth_methods.emplace_back(copy(portal_auth_methods_at(methods, i)).value_or(""));
    copied.auto_create_wallet = portal_auth_methods_auto_create_wallet(methods) == PORTAL_AUTH_TRUE;
    complete<Methods>(user_data, std::move(copied));
}

/* A copy of a result the library lends; nullopt for NULL (not a sign-in redirect). */
inline Outcome<std::optional<Result>> read_result(const portal_auth_result *result) {
    if (!result) return std::optional<Result>();
    switch (portal_auth_result_kind(result)) {
    case PORTAL_AUTH_RESULT_AUTHENTICATED: {
        std::optional<Session> session = Session::retain(portal_auth_result_session(result));
        if (!session) return lacking("a session");
        portal_auth_tristate abstracted = portal_auth_result_is_account_abstracted(result);
        return std::optional<Result>(Authenticated{
            std::move(*session), copy(portal_auth_result_client_id(result)),
            abstracted == PORTAL_AUTH_UNSET ? std::nullopt : std::optional<bool>(abstracted == PORTAL_AUTH_YES)});
    }
    case PORTAL_AUTH_RESULT_TOTP_REQUIRED: {
        /* Copied straight into Secrets: no other copy of them is made. */
        const char *user_jwt = portal_auth_result_user_jwt(result);
        if (!user_jwt) return lacking("a userJwt");
        const char *totp_link = portal_auth_result_totp_link(result);
        return std::optional<Result>(TotpRequired{user_jwt, totp_link ? std::optional<Secret>(totp_link) : std::nullopt,
                                                  copy(portal_auth_result_end_user_id(result)).value_or(""),
                                                  portal_auth_result_totp_expires_at(result)});
    }
    default:
        return lacking("a result of a kind this header knows");
    }
}

/* handle_redirect's callback: a result, or none (not a sign-in redirect). */
inline void on_redirect(void *user_data, const portal_auth_result *result, const portal_auth_error *error) noexcept {
    complete<std::optional<Result>>(user_data, error ? Outcome<std::optional<Result>>(Error::copy(error))
                                                     : read_result(result));
}

/* The callback of the calls that always end with a result or an error. */
inline void on_result(void *user_data, const portal_auth_result *result, const portal_auth_error *error) noexcept {
    if (error) return complete<Result>(user_data, Error::copy(error));
    Outcome<std::optional<Result>> read = read_result(result);
    if (const Error *failed = read.error()) return complete<Result>(user_data, *failed);
    std::optional<Result> &value = *read;
    complete<Result>(user_data, value ? Outcome<Result>(std::move(*value)) : Outcome<Result>(lacking("a result")));
}

inline void on_session(void *user_data, portal_auth_session *session, const portal_auth_error *error) noexcept {
    complete<std::optional<Session>>(user_data, error ? Outcome<std::optional<Session>>(Error::copy(error))
                                                      : Outcome<std::optional<Session>>(Session::retain(session)));
}

/* What listening for redirects keeps until its last call. */
struct Listening {
    std::function<void(Outcome<std::optional<Result>>)> each;
    Done<void> ended;
    Keep keep;
};

/* Each forwarded redirect's outcome to `each`; the last call, to `ended`, frees it all. */
inline void on_forwarded(void *user_data, const portal_auth_result *result, const portal_auth_error *error,
                         portal_auth_bool last) noexcept {
    auto *listening = static_cast<Listening *>(user_data);
    if (last != PORTAL_AUTH_TRUE) {
        if (discarding()) return;
        shielded_completion([&] {
            listening->each(error ? Outcome<std::optional<Result>>(Error::copy(error)) : read_result(result));
        });
        return;
    }
    std::unique_ptr<Listening> owned(listening);
    if (discarding()) return;
    shielded_completion([&] { owned->ended(error ? Outcome<void>(Error::copy(error)) : Outcome<void>()); });
}

} // namespace detail

/* ---- Storage ---------------------------------------------------------------------------- */

namespace detail {

/* Set by SessionStore::fail() on the thread of the store's call in progress. */
inline bool &store_failed() noexcept {
    static thread_local bool failed = false;
    return failed;
}

} // namespace detail

/* The host's own session store (portal_auth_storage_callbacks): one opaque UTF-8 value per
   environment, which the library encodes, decodes and applies the fault taxonomy to. Called
   on a library thread, one call at a time per environment. A call fails when it throws, or
   calls fail() (the way without exceptions): a failure of the store
   (Code::session_storage_failure, Reason::host_storage_failed; nothing is deleted for it).
   The value holds the Client Session Token: keep it as a secret. This layer's own copies of
   it are wiped: the value set is a Secret, and the one get returns is wiped once read. */
class SessionStore {
public:
    virtual ~SessionStore() = default;
    /* The stored value, or nullopt when nothing is stored. */
    virtual std::optional<std::string> get(const std::string &environment_id) = 0;
    /* Stores value, replacing any. */
    virtual void set(const std::string &environment_id, const std::string &value) = 0;
    /* Deletes the value; deleting nothing is a success. */
    virtual void remove(const std::string &environment_id) = 0;

protected:
    /* Makes the call in progress on this thread (get, set or remove) fail once it returns,
       whatever it returns. */
    static void fail() noexcept { detail::store_failed() = true; }
};

/* Where a client keeps the session of its environment. */
class Storage {
public:
    /* The desktop keyring (Secret Service), the default. */
    static Storage keyring() noexcept { return Storage(PORTAL_AUTH_STORAGE_KEYRING, nullptr); }
    /* This process only, forgotten at exit. */
    static Storage memory() noexcept { return Storage(PORTAL_AUTH_STORAGE_MEMORY, nullptr); }
    /* The host's store, shared with the library until the client and every session it made
       are gone. */
    static Storage host(std::shared_ptr<SessionStore> store) noexcept {
        return Storage(PORTAL_AUTH_STORAGE_HOST, std::move(store));
    }
    /* A plain file per application and environment (not encrypted), for machines with no
       keyring, in `folder` (the user's alone), or nullopt: $XDG_STATE_HOME/portal-auth. */
    static Storage file(std::optional<std::string> folder = std::nullopt) {
        Storage storage(PORTAL_AUTH_STORAGE_FILE, nullptr);
        storage.folder_ = std::move(folder);
        return storage;
    }

    portal_auth_storage_kind kind() const noexcept { return kind_; }
    const std::shared_ptr<SessionStore> &store() const noexcept { return store_; }
    /* With file(): the folder given, if any. */
    const std::optional<std::string> &folder() const noexcept { return folder_; }

private:
    Storage(portal_auth_storage_kind kind, std::shared_ptr<SessionStore> store) noexcept
        : kind_(kind), store_(std::move(store)) {}

    portal_auth_storage_kind kind_;
    std::shared_ptr<SessionStore> store_;
    std::optional<std::string> folder_;
};

namespace detail {

/* A SessionStore behind the C callbacks; the library's release deletes it. */
struct StoreBridge {
    std::shared_ptr<SessionStore> store;
    /* While portal_auth_new runs: set when it released the bridge (it failed after reading the
       callbacks), so that the caller knows whether the bridge is still its own to delete. */
    bool *released_in_new;

    portal_auth_storage_callbacks callbacks() {
        return portal_auth_storage_callbacks{sizeof(portal_auth_storage_callbacks), get, set, remove, this, release};
    }

    /* One call of the store, made by run(store): 0, or -1 when it failed (threw, or called
       SessionStore::fail()). */
    template <typename Run>
    static int status(void *data, Run run) noexcept {
        store_failed() = false;
        return shielded(
            [&] {
                run(*static_cast<StoreBridge *>(data)->store);
                return store_failed() ? -1 : 0;
            },
            [] { return -1; });
    }

    static int get(void *data, const char *environment_id, char **out_value) noexcept {
        *out_value = nullptr;
        return status(data, [&](SessionStore &host) {
            std::optional<std::string> got = host.get(environment_id);
            if (!got || store_failed()) return;
            Secret value(std::move(*got));
            /* The library wipes and free()s it. */
            *out_value = static_cast<char *>(std::malloc(value.size() + 1));
            if (*out_value)
                std::memcpy(*out_value, value.c_str(), value.size() + 1);
            else
                store_failed() = true;
        });
    }

    static int set(void *data, const char *environment_id, const char *value) noexcept {
        return status(data, [&](SessionStore &host) { host.set(environment_id, Secret(value)); });
    }

    static int remove(void *data, const char *environment_id) noexcept {
        return status(data, [&](SessionStore &host) { host.remove(environment_id); });
    }

    static void release(void *data) noexcept {
        auto *bridge = static_cast<StoreBridge *>(data);
        if (bridge->released_in_new) *bridge->released_in_new = true;
        delete bridge;
    }
};

} // namespace detail

/* ---- Options ---------------------------------------------------------------------------- */

class CompletionQueue;

/* The sender and template of magic-link emails. */
struct MagicLinkConfig {
    std::string from_email;
    std::string template_id;
};

/* A client's configuration (portal_auth_options); timeouts of zero or less are the library's
   defaults, passed through unchanged. */
struct Options {
    std::string auth_environment_id;
    std::string redirect_url;
    std::optional<std::string> api_host;           /* nullopt: "api.portalhq.io" */
    std::optional<MagicLinkConfig> magic_link;     /* nullopt: no magic links */
    std::optional<bool> is_account_abstracted;    /* nullopt: the server decides */
    Storage storage = Storage::keyring();
    std::int32_t connect_timeout_ms = 0;          /* 0: 10,000 ms */
    std::int32_t request_timeout_ms = 0;          /* 0: 30,000 ms */
    /* With the keyring: the application's reverse-DNS name ("com.example.App"), which makes
       the keyring item the application's own. nullopt: none (portal_auth_options). */
    std::optional<std::string> application_id;
    /* With the keyring: the longest wait for the user to answer the keyring's dialog; 0:
       never show one (portal_auth_options). */
    std::int32_t keyring_prompt_timeout_ms = 0;
    /* The component's own queue the client's calls complete through; nullptr: the I/O
       thread. The client keeps the queue for its own use (portal_auth_options). */
    const CompletionQueue *completion_queue = nullptr;
    /* A PEM file of the certificate authorities to trust in place of the system's (a
       company's own CA); it must be readable when the client is made. nullopt:
       $CURL_CA_BUNDLE, else $SSL_CERT_FILE and $SSL_CERT_DIR, else the system's
       (portal_auth_options, docs/network.md). */
    std::optional<std::string> ca_file;
};

/* ---- Completion models ------------------------------------------------------------------ */

/* A completion the library hands a dispatcher: run it exactly once, from any thread. Running a
   job a second time (or a moved-from one) does nothing. A job destroyed unrun (its receiver
   gone, its loop ended) releases its completion without calling it: what the library and the
   completion hold is freed. */
class Job {
public:
    Job(portal_auth_job_fn run, void *job) noexcept : run_(run), job_(job) {}
    Job(Job &&other) noexcept : run_(std::exchange(other.run_, nullptr)), job_(other.job_) {}
    Job(const Job &) = delete;
    Job &operator=(const Job &) = delete;
    Job &operator=(Job &&) = delete;
    ~Job() {
        if (portal_auth_job_fn run = std::exchange(run_, nullptr)) {
            /* The C contract runs every job once; its completion, called through this layer's
               callbacks, sees the flag and lets go of itself uncalled. */
            bool was = std::exchange(detail::discarding(), true);
            run(job_);
            detail::discarding() = was;
        }
    }

    void operator()() {
        if (portal_auth_job_fn run = std::exchange(run_, nullptr)) run(job_);
    }

private:
    portal_auth_job_fn run_;
    void *job_;
};

/* Runs the client's completions where the host wants them (portal_auth_set_dispatcher): it
   receives each job on a library thread and runs it, or posts it to its loop. */
using Dispatcher = std::function<void(Job job)>;

/* The completion queue's descriptor (portal_auth_completion_fd): readable exactly while the
   queue has work; watch it, never read, write or close it. -1 if none. */
inline int completion_fd() noexcept { return portal_auth_completion_fd(); }

/* Does the queue's ready work and runs the pending completions on this thread
   (portal_auth_run_completions); how many completions ran. */
inline std::size_t run_completions() noexcept { return portal_auth_run_completions(); }

/* A completion queue a component owns (completion model 4., portal_auth_completion_queue):
   the calls of the clients whose Options name it do their work and complete only in run(), on
   the thread that calls it. Move-only. Destroying it lets go of it
   (portal_auth_completion_queue_free; stop watching fd() first): what it still holds, and
   the calls of clients that still name it, then complete on the I/O thread. */
class CompletionQueue {
public:
    /* A new queue; Code::internal when no descriptor is left for it. */
    static Outcome<CompletionQueue> create() {
        portal_auth_completion_queue *queue = nullptr;
        if (std::optional<Error> failed = detail::failure(portal_auth_completion_queue_new(&queue))) return std::move(*failed);
        return CompletionQueue(queue);
    }
#if PORTAL_AUTH_HPP_EXCEPTIONS
    /* The throwing form: create()'s value, or throws its Error. */
    CompletionQueue() : CompletionQueue(create().value()) {}
#endif

    CompletionQueue(CompletionQueue &&other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    CompletionQueue &operator=(CompletionQueue &&other) noexcept {
        std::swap(raw_, other.raw_);
        return *this;
    }
    CompletionQueue(const CompletionQueue &) = delete;
    CompletionQueue &operator=(const CompletionQueue &) = delete;
    ~CompletionQueue() { portal_auth_completion_queue_free(raw_); }

    /* Readable exactly while the queue has work (portal_auth_completion_queue_fd): watch it,
       never read, write or close it. */
    int fd() const noexcept { return portal_auth_completion_queue_fd(raw_); }
    /* Does the queue's ready work and runs its pending completions on this thread
       (portal_auth_completion_queue_run); how many completions ran. */
    std::size_t run() noexcept { return portal_auth_completion_queue_run(raw_); }
    portal_auth_completion_queue *raw() const noexcept { return raw_; }

private:
    explicit CompletionQueue(portal_auth_completion_queue *raw) noexcept : raw_(raw) {}

    portal_auth_completion_queue *raw_;
};

/* Opens an authorize URL in a browser, on a library thread, once per browser sign-in: return
   opener_launched (0) once the browser is launched; opener_no_browser when there is no
   browser to open (a terminal over SSH), which ends the sign-in at once as
   Code::sign_in_unavailable with Reason::no_browser, Error::url() giving the URL to show the
   user; another value (or an exception, counted as -1) ends it as Code::sign_in_unavailable
   with Reason::opener_failed. */
using BrowserOpener = std::function<int(const std::string &url, bool ephemeral)>;

/* What a BrowserOpener returns: the browser is launched. */
inline constexpr int opener_launched = 0;
/* What a BrowserOpener returns: there is no browser to open (PORTAL_AUTH_REASON_NO_BROWSER). */
inline constexpr int opener_no_browser = PORTAL_AUTH_REASON_NO_BROWSER;

namespace detail {

/* The library owns the dispatcher it was given: it calls on_dispatch until no job of it can
   run any more, then on_dispatcher_destroy, which deletes it. */
inline void on_dispatch(void *data, portal_auth_job_fn run, void *job) noexcept {
    /* A job an exception dropped runs discarded. */
    shielded_completion([&] { (*static_cast<Dispatcher *>(data))(Job(run, job)); });
}

inline void on_dispatcher_destroy(void *data) noexcept { delete static_cast<Dispatcher *>(data); }

inline int on_open(void *data, const char *url, portal_auth_bool ephemeral) noexcept {
    auto *box = static_cast<Box<BrowserOpener> *>(data);
    std::shared_ptr<Box<BrowserOpener>> keep = box->shared_from_this();
    return shielded([&] { return box->function(url, ephemeral == PORTAL_AUTH_TRUE); }, [] { return -1; });
}

/* What a client shares with its calls in flight, and the lock that keeps what a call keeps
   the same as what the library was given when the call started. */
struct Hooks {
    std::mutex lock;
    std::shared_ptr<Box<BrowserOpener>> opener;
};

/* The C options of `options`, but for host storage's callbacks, their strings taken by
   strings (which refuses one C cannot take); the strings stay options'. */
inline portal_auth_options c_options(const Options &options, CStrings &strings) {
    portal_auth_options raw;
    portal_auth_options_init(&raw, sizeof raw);
    raw.auth_environment_id = strings(options.auth_environment_id, "auth_environment_id");
    raw.redirect_url = strings(options.redirect_url, "redirect_url");
    raw.api_host = strings(options.api_host, "api_host");
    if (options.magic_link) {
        raw.magic_link_from_email = strings(options.magic_link->from_email, "magic_link_from_email");
        raw.magic_link_template_id = strings(options.magic_link->template_id, "magic_link_template_id");
    }
    raw.is_account_abstracted = !options.is_account_abstracted ? PORTAL_AUTH_UNSET
                                : *options.is_account_abstracted ? PORTAL_AUTH_YES : PORTAL_AUTH_NO;
    raw.storage = options.storage.kind();
    raw.connect_timeout_ms = options.connect_timeout_ms;
    raw.request_timeout_ms = options.request_timeout_ms;
    raw.application_id = strings(options.application_id, "application_id");
    raw.keyring_prompt_timeout_ms = options.keyring_prompt_timeout_ms;
    raw.file_storage_path = strings(options.storage.folder(), "file_storage_path");
    raw.completion_queue = options.completion_queue ? options.completion_queue->raw() : nullptr;
    raw.ca_file = strings(options.ca_file, "ca_file");
    return raw;
}

} // namespace detail

/* ---- Redirect forwarding ---------------------------------------------------------------- */

/* What became of a forwarded redirect (portal_auth_forward_redirect). */
enum class ForwardResult {
    taken = PORTAL_AUTH_FORWARD_TAKEN,             /* the running instance handles it */
    no_instance = PORTAL_AUTH_FORWARD_NO_INSTANCE, /* none listens: handle it here */
    refused = PORTAL_AUTH_FORWARD_REFUSED          /* not a redirect of these options */
};

namespace detail {

inline void on_forward(void *user_data, portal_auth_forward_result outcome, const portal_auth_error *error) noexcept {
    std::unique_ptr<Done<ForwardResult>> done(static_cast<Done<ForwardResult> *>(user_data));
    shielded_completion([&] {
        (*done)(error ? Outcome<ForwardResult>(Error::copy(error)) : Outcome<ForwardResult>(static_cast<ForwardResult>(outcome)));
    });
}

} // namespace detail

/* In the URL handler the desktop started: hands url to the application's running instance,
   the one listening (Client::listen_for_redirects) for the same user, application_id and
   environment as options (checked as Client's are; the storage plays no part). done is called
   once, on a library thread, unless this returns an error. */
inline Outcome<void> forward_redirect(std::nothrow_t, const Options &options, const std::string &url,
                                      Done<ForwardResult> done) {
    if (!done) return detail::empty_callable("done");
    detail::CStrings strings;
    portal_auth_options raw = detail::c_options(options, strings);
    if (options.storage.store()) raw.storage = PORTAL_AUTH_STORAGE_MEMORY; /* no callbacks to lend */
    const char *text = strings(url, "url");
    if (const Error *refused = strings.refused()) return *refused;
    auto pending = std::make_unique<Done<ForwardResult>>(std::move(done));
    Outcome<void> started = detail::outcome(portal_auth_forward_redirect(&raw, text, detail::on_forward, pending.get()));
    if (started) pending.release(); /* the callback owns it now */
    return started;
}

#if PORTAL_AUTH_HPP_EXCEPTIONS
/* The throwing form: throws the std::nothrow form's Error. */
inline void forward_redirect(const Options &options, const std::string &url, Done<ForwardResult> done) {
    forward_redirect(std::nothrow, options, url, std::move(done)).value();
}
#endif

/* ---- The client ------------------------------------------------------------------------- */

/* A client of one auth environment (portal_auth). Every member may be called from any thread.
   Destroying it with calls in flight is safe: each still completes, exactly once, the way it
   was started. Each asynchronous member returns an Outcome<Call>, an error when the library
   refuses to start the call (done is then never called), and calls done exactly once
   otherwise. A moved-from Client may only be destroyed or assigned to. */
class Client {
public:
    /* Checks the options and makes the client, with no network or keyring I/O; for options
       it refuses, the Error (Code::invalid_argument, name() naming the field). */
    static Outcome<Client> create(const Options &options) {
        detail::CStrings strings;
        portal_auth_options raw = detail::c_options(options, strings);
        if (const Error *refused = strings.refused()) return *refused;
        auto hooks = std::make_unique<detail::Hooks>();
        bool released = false;
        detail::StoreBridge *bridge = nullptr;
        portal_auth_storage_callbacks callbacks{};
        if (options.storage.store()) {
            bridge = new detail::StoreBridge{options.storage.store(), &released};
            callbacks = bridge->callbacks();
            raw.host_storage = &callbacks;
        }
        portal_auth *made = nullptr;
        portal_auth_error *error = nullptr;
        portal_auth_code code = portal_auth_new(&raw, &made, &error);
        if (code != PORTAL_AUTH_OK && bridge && !released) delete bridge;
        if (std::optional<Error> failed = detail::failure(code, error)) return std::move(*failed);
        if (bridge) bridge->released_in_new = nullptr;
        return Client(made, std::move(hooks));
    }

    Client(Client &&other) noexcept : raw_(std::exchange(other.raw_, nullptr)), hooks_(std::move(other.hooks_)) {}
    Client &operator=(Client &&other) noexcept {
        std::swap(raw_, other.raw_);
        std::swap(hooks_, other.hooks_);
        return *this;
    }
    Client(const Client &) = delete;
    Client &operator=(const Client &) = delete;
    ~Client() { portal_auth_free(raw_); }

    portal_auth *raw() const noexcept { return raw_; }

    /* -- Completion models: the I/O thread (the default), a dispatcher, or the queue. -- */

    /* Completes the calls started from now on (and the invalidations of the sessions this
       client hands out, while it lives) through dispatcher; an empty one: the I/O thread
       again. The dispatcher, and what it captured, is destroyed on some thread once no job of
       it can run any more. */
    Outcome<void> set_dispatcher(std::nothrow_t, Dispatcher dispatcher) {
        if (!dispatcher) return detail::outcome(portal_auth_set_dispatcher(raw_, nullptr, nullptr, nullptr));
        /* Owned by the library from here on, released through on_dispatcher_destroy, on
           failure as well. */
        auto *held = new Dispatcher(std::move(dispatcher));
        return detail::outcome(portal_auth_set_dispatcher(raw_, detail::on_dispatch, held, detail::on_dispatcher_destroy));
    }

    /* Runs the calls started from now on through the completion queue (true), in
       run_completions() on the thread that watches completion_fd(), or on the I/O thread
       (false). Either replaces the dispatcher. */
    Outcome<void> set_completion_queue(std::nothrow_t, bool enabled) {
        return detail::outcome(portal_auth_set_completion_queue(raw_, enabled ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE));
    }

    /* -- Methods, magic link, OAuth URLs -- */

    Outcome<Call> get_methods(std::nothrow_t, Done<Methods> done) {
        return start(std::move(done), [this](void *data, portal_auth_call **call) {
            return portal_auth_get_methods(raw_, detail::on_methods, data, call);
        });
    }

    /* Emails the user a sign-in link (the options' magic_link is needed). */
    Outcome<Call> send_magic_link(std::nothrow_t, const std::string &email, Done<void> done) {
        detail::CStrings strings;
        const char *text = strings(email, "email");
        if (const Error *refused = strings.refused()) return *refused;
        return start(std::move(done), [this, text](void *data, portal_auth_call **call) {
            return portal_auth_send_magic_link(raw_, text, detail::on_done, data, call);
        });
    }

    /* A fresh, single-use authorize URL for the host to open itself. */
    Outcome<Call> login_with_google(std::nothrow_t, Done<std::string> done) {
        return start(std::move(done), [this](void *data, portal_auth_call **call) {
            return portal_auth_login_with_google(raw_, detail::on_url, data, call);
        });
    }

    Outcome<Call> login_with_apple(std::nothrow_t, Done<std::string> done) {
        return start(std::move(done), [this](void *data, portal_auth_call **call) {
            return portal_auth_login_with_apple(raw_, detail::on_url, data, call);
        });
    }

    /* -- Browser sign-in (a loopback redirect URL with its port) -- */

    /* The opener of the browser sign-ins started from now on; an empty one: the default
       ($BROWSER, else xdg-open). */
    Outcome<void> set_browser_opener(std::nothrow_t, BrowserOpener opener) {
        std::lock_guard<std::mutex> guard(hooks_->lock);
        auto box = opener ? std::make_shared<detail::Box<BrowserOpener>>(std::move(opener)) : nullptr;
        Outcome<void> set = detail::outcome(portal_auth_set_browser_opener(raw_, box ? detail::on_open : nullptr, box.get()));
        if (set) hooks_->opener = std::move(box);
        return set;
    }

    /* The flag passed to the opener as `ephemeral` (a private window, if it can). */
    Outcome<void> set_prefers_ephemeral_web_browser_session(std::nothrow_t, bool prefers) {
        return detail::outcome(portal_auth_set_prefers_ephemeral_web_browser_session(
            raw_, prefers ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE));
    }

    bool prefers_ephemeral_web_browser_session() const noexcept {
        return portal_auth_prefers_ephemeral_web_browser_session(raw_) == PORTAL_AUTH_TRUE;
    }

    /* Opens the browser, waits up to timeout_ms (0: 300,000 ms) for it to come back, and
       completes the sign-in. */
    Outcome<Call> sign_in_with_google(std::nothrow_t, std::int32_t timeout_ms, Done<Result> done) {
        return start(std::move(done), [this, timeout_ms](void *data, portal_auth_call **call) {
            return portal_auth_sign_in_with_google(raw_, timeout_ms, detail::on_result, data, call);
        });
    }

    Outcome<Call> sign_in_with_apple(std::nothrow_t, std::int32_t timeout_ms, Done<Result> done) {
        return start(std::move(done), [this, timeout_ms](void *data, portal_auth_call **call) {
            return portal_auth_sign_in_with_apple(raw_, timeout_ms, detail::on_result, data, call);
        });
    }

    /* Signs in by magic link with nothing to paste: with a loopback redirect URL, emails the
       link, waits up to timeout_ms (0: 900,000 ms) for the browser the user opens it in, and
       completes the sign-in; handle_redirect with the link completes it too. */
    Outcome<Call> sign_in_with_magic_link(std::nothrow_t, const std::string &email, std::int32_t timeout_ms,
                                          Done<Result> done) {
        detail::CStrings strings;
        const char *text = strings(email, "email");
        if (const Error *refused = strings.refused()) return *refused;
        return start(std::move(done), [this, text, timeout_ms](void *data, portal_auth_call **call) {
            return portal_auth_sign_in_with_magic_link(raw_, text, timeout_ms, detail::on_result, data, call);
        });
    }

    /* -- Redirects and TOTP -- */

    /* In the running application: listens for the redirects its next instances forward
       (forward_redirect) and handles each as handle_redirect would, calling each with its
       outcome, one at a time in order; then ended, once, with why listening ended
       (Code::sign_in_closed: cancelled, or the client went; Code::sign_in_unavailable with
       its reason: it could not listen). Listening has begun when this returns its Call. */
    Outcome<Call> listen_for_redirects(std::nothrow_t, std::function<void(Outcome<std::optional<Result>>)> each,
                                       Done<void> ended) {
        if (!each) return detail::empty_callable("each");
        if (!ended) return detail::empty_callable("ended");
        std::lock_guard<std::mutex> guard(hooks_->lock);
        return detail::begin_call(
            std::make_unique<detail::Listening>(detail::Listening{std::move(each), std::move(ended), detail::Keep{hooks_->opener}}),
            [this](void *data, portal_auth_call **call) {
                return portal_auth_listen_for_redirects(raw_, detail::on_forwarded, data, call);
            });
    }

    /* Exchanges the grant of the redirect URL the app received; nullopt when it is not a
       sign-in redirect of this client (nothing was sent). */
    Outcome<Call> handle_redirect(std::nothrow_t, const std::string &url, Done<std::optional<Result>> done) {
        detail::CStrings strings;
        const char *text = strings(url, "url");
        if (const Error *refused = strings.refused()) return *refused;
        return start(std::move(done), [this, text](void *data, portal_auth_call **call) {
            return portal_auth_handle_redirect(raw_, text, detail::on_redirect, data, call);
        });
    }

    /* Submits the user's code for a TotpRequired step, posted verbatim (tidy what the user
       typed with normalize_totp_code first). A refused code is Code::unauthorized with
       Reason::totp_code_rejected (ask again, for the same step), Reason::totp_step_expired
       once the step expired by the server's clock, or Reason::totp_step_used when this client
       already signed in with it (both: sign in again). */
    Outcome<Call> verify_totp(std::nothrow_t, const std::string &code, const std::string &user_jwt, Done<Result> done) {
        detail::CStrings strings;
        const char *code_text = strings(code, "code");
        const char *jwt_text = strings(user_jwt, "user_jwt");
        if (const Error *refused = strings.refused()) return *refused;
        return start(std::move(done), [this, code_text, jwt_text](void *data, portal_auth_call **call) {
            return portal_auth_verify_totp(raw_, code_text, jwt_text, detail::on_result, data, call);
        });
    }

    /* -- The persisted session -- */

    /* Reads the persisted session, with no network; nullopt when none is stored. */
    Outcome<Call> restore_session(std::nothrow_t, Done<std::optional<Session>> done) {
        return start(std::move(done), [this](void *data, portal_auth_call **call) {
            return portal_auth_restore_session(raw_, detail::on_session, data, call);
        });
    }

    /* Deletes the persisted session and forgets the last grant. */
    Outcome<Call> clear_persisted_session(std::nothrow_t, Done<void> done) {
        return start(std::move(done), [this](void *data, portal_auth_call **call) {
            return portal_auth_clear_persisted_session(raw_, detail::on_done, data, call);
        });
    }

#if PORTAL_AUTH_HPP_EXCEPTIONS
    /* -- The throwing forms: each returns its std::nothrow form's value, or throws its Error -- */

    explicit Client(const Options &options) : Client(create(options).value()) {}
    void set_dispatcher(Dispatcher dispatcher) { set_dispatcher(std::nothrow, std::move(dispatcher)).value(); }
    void set_completion_queue(bool enabled) { set_completion_queue(std::nothrow, enabled).value(); }
    Call get_methods(Done<Methods> done) { return get_methods(std::nothrow, std::move(done)).value(); }
    Call send_magic_link(const std::string &email, Done<void> done) {
        return send_magic_link(std::nothrow, email, std::move(done)).value();
    }
    Call login_with_google(Done<std::string> done) { return login_with_google(std::nothrow, std::move(done)).value(); }
    Call login_with_apple(Done<std::string> done) { return login_with_apple(std::nothrow, std::move(done)).value(); }
    void set_browser_opener(BrowserOpener opener) { set_browser_opener(std::nothrow, std::move(opener)).value(); }
    void set_prefers_ephemeral_web_browser_session(bool prefers) {
        set_prefers_ephemeral_web_browser_session(std::nothrow, prefers).value();
    }
    Call sign_in_with_google(std::int32_t timeout_ms, Done<Result> done) {
        return sign_in_with_google(std::nothrow, timeout_ms, std::move(done)).value();
    }
    Call sign_in_with_apple(std::int32_t timeout_ms, Done<Result> done) {
        return sign_in_with_apple(std::nothrow, timeout_ms, std::move(done)).value();
    }
    Call sign_in_with_magic_link(const std::string &email, std::int32_t timeout_ms, Done<Result> done) {
        return sign_in_with_magic_link(std::nothrow, email, timeout_ms, std::move(done)).value();
    }
    Call listen_for_redirects(std::function<void(Outcome<std::optional<Result>>)> each, Done<void> ended) {
        return listen_for_redirects(std::nothrow, std::move(each), std::move(ended)).value();
    }
    Call handle_redirect(const std::string &url, Done<std::optional<Result>> done) {
        return handle_redirect(std::nothrow, url, std::move(done)).value();
    }
    Call verify_totp(const std::string &code, const std::string &user_jwt, Done<Result> done) {
        return verify_totp(std::nothrow, code, user_jwt, std::move(done)).value();
    }
    Call restore_session(Done<std::optional<Session>> done) { return restore_session(std::nothrow, std::move(done)).value(); }
    Call clear_persisted_session(Done<void> done) { return clear_persisted_session(std::nothrow, std::move(done)).value(); }
#endif

private:
    Client(portal_auth *raw, std::unique_ptr<detail::Hooks> hooks) noexcept : raw_(raw), hooks_(std::move(hooks)) {}

    /* Under the hooks' lock, the library takes the opener this call keeps. */
    template <typename Value, typename Begin>
    Outcome<Call> start(Done<Value> done, Begin begin) {
        std::lock_guard<std::mutex> guard(hooks_->lock);
        return detail::start(std::move(done), detail::Keep{hooks_->opener}, begin);
    }

    portal_auth *raw_ = nullptr;
    std::unique_ptr<detail::Hooks> hooks_;
};

/* ---- Logging ---------------------------------------------------------------------------- */

/* Log levels, lowest first (portal_auth_log_level). */
enum class LogLevel {
    debug = PORTAL_AUTH_LOG_DEBUG,
    info = PORTAL_AUTH_LOG_INFO,
    warning = PORTAL_AUTH_LOG_WARNING,
    error = PORTAL_AUTH_LOG_ERROR,
    none = PORTAL_AUTH_LOG_NONE
};

/* Receives one of the library's log lines, which never carry a secret; message is borrowed
   for the call. */
using LogHandler = std::function<void(LogLevel level, std::string_view message)>;

namespace detail {

/* The process's one handler, and the level set. Never destroyed: the library may log until
   the process ends, after static destructors have run. Shared, so that reporting an
   exception a completion threw (log_completion_exception) may call it outside the lock. */
struct LogHandlers {
    std::mutex lock;
    std::shared_ptr<LogHandler> current;
    LogLevel level = LogLevel::debug;
};

inline LogHandlers &log_handlers() {
    static LogHandlers *handlers = new LogHandlers();
    return *handlers;
}

inline void on_log(void *data, portal_auth_log_level level, const char *message) noexcept {
    /* An exception is dropped, with its line: reporting it would log again. */
    shielded([&] { (*static_cast<LogHandler *>(data))(static_cast<LogLevel>(level), message ? message : ""); }, [] {});
}

/* Installs handler with install (either C setter); once that returns, the library no longer
   calls the handler it replaced, which is then destroyed. */
inline Outcome<void> install_log_handler(portal_auth_code (*install)(portal_auth_log_fn, void *), LogHandler handler) {
    LogHandlers &handlers = log_handlers();
    std::lock_guard<std::mutex> guard(handlers.lock);
    auto next = handler ? std::make_shared<LogHandler>(std::move(handler)) : nullptr;
    Outcome<void> installed = outcome(install(next ? on_log : nullptr, next.get()));
    if (installed) handlers.current = std::move(next);
    return installed;
}

} // namespace detail

/* The process's log handler, called on the library thread that logs; an empty one: silence. */
inline Outcome<void> set_log_handler(std::nothrow_t, LogHandler handler) {
    return detail::install_log_handler(portal_auth_set_log_handler, std::move(handler));
}

/* The process's log handler, called from run_completions() on the thread that runs it. */
inline Outcome<void> set_queued_log_handler(std::nothrow_t, LogHandler handler) {
    return detail::install_log_handler(portal_auth_set_queued_log_handler, std::move(handler));
}

/* Passes only the lines at level and above to the handler. */
inline Outcome<void> set_log_level(std::nothrow_t, LogLevel level) {
    detail::LogHandlers &handlers = detail::log_handlers();
    std::lock_guard<std::mutex> guard(handlers.lock);
    Outcome<void> set = detail::outcome(portal_auth_set_log_level(static_cast<portal_auth_log_level>(level)));
    if (set) handlers.level = level;
    return set;
}

#if PORTAL_AUTH_HPP_EXCEPTIONS
/* The throwing forms: each throws its std::nothrow form's Error. */
inline void set_log_handler(LogHandler handler) { set_log_handler(std::nothrow, std::move(handler)).value(); }
inline void set_queued_log_handler(LogHandler handler) { set_queued_log_handler(std::nothrow, std::move(handler)).value(); }
inline void set_log_level(LogLevel level) { set_log_level(std::nothrow, level).value(); }

/* ---- Exceptions that escape completions (only with exceptions) -------------------------- */

namespace detail {

/* The process's completion exception handler; none: the default. Never destroyed, as a
   completion may run until the process ends. */
struct CompletionExceptions {
    std::mutex lock;
    std::shared_ptr<CompletionExceptionHandler> current;
};

inline CompletionExceptions &completion_exceptions() {
    static CompletionExceptions *handlers = new CompletionExceptions();
    return *handlers;
}

inline void completion_threw() noexcept {
    std::exception_ptr exception = std::current_exception();
    /* The handler's own exception is dropped. */
    shielded(
        [&] {
            std::shared_ptr<CompletionExceptionHandler> handler;
            {
                CompletionExceptions &handlers = completion_exceptions();
                std::lock_guard<std::mutex> guard(handlers.lock);
                handler = handlers.current;
            }
            if (handler)
                (*handler)(exception);
            else
                log_completion_exception(exception);
        },
        [] {});
}

} // namespace detail

inline void set_completion_exception_handler(CompletionExceptionHandler handler) {
    detail::CompletionExceptions &handlers = detail::completion_exceptions();
    auto next = handler ? std::make_shared<CompletionExceptionHandler>(std::move(handler)) : nullptr;
    std::lock_guard<std::mutex> guard(handlers.lock);
    handlers.current.swap(next); /* the one replaced goes once no thread is calling it */
}

inline void log_completion_exception(std::exception_ptr exception) noexcept {
    /* An exception here has nowhere left to be reported. */
    detail::shielded(
        [&] {
            std::string line = "A completion threw: ";
            try {
                if (exception) std::rethrow_exception(exception);
                line += "no exception";
            } catch (const std::exception &caught) {
                line += caught.what();
            } catch (...) {
                line += "an exception of a type not derived from std::exception";
            }
            std::shared_ptr<LogHandler> handler;
            LogLevel level;
            {
                detail::LogHandlers &handlers = detail::log_handlers();
                std::lock_guard<std::mutex> guard(handlers.lock);
                handler = handlers.current;
                level = handlers.level;
            }
            if (level == LogLevel::none) return;
            if (handler)
                (*handler)(LogLevel::error, line);
            else
                std::fprintf(stderr, "portal_auth: %s\n", line.c_str());
        },
        [] {});
}
#endif

/* ---- Version ---------------------------------------------------------------------------- */

/* The version of the library that was loaded ("0.1.0"), and as PORTAL_AUTH_VERSION_NUMBER
   counts it, to compare with the header's. */
inline std::string version() { return portal_auth_version(); }
inline std::int32_t version_number() noexcept { return portal_auth_version_number(); }

} // namespace portal::auth

#endif
