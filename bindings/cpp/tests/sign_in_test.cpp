/* The C++ layer (portal_auth.hpp) end to end against the Portal emulator whose base URL is in
 * PORTAL_AUTH_TEST_API_HOST, inside a private keyring: a magic link from the emulator's
 * outbox, TOTP enrollment with a code computed from the enrollment secret, the session in the
 * keyring, its replay, a restore from another client, sign-out; every completion model (a
 * component's own queue too); the errors with each of their fields; the reasons that say
 * what the user does next (a refused TOTP code, a step expired by the server's clock, a used
 * link, no browser), their names and sentences, and the typed-code helper; host storage with
 * its release; browser sign-in with an opener that is a lambda; completions that throw,
 * caught and handed to the handler; logging. The first argument names the run (its emails),
 * so that builds by two compilers share one emulator. */
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>

namespace {

using test::email;
using test::failure;
using test::free_port;
using test::label;
using test::query_email;

void version() {
    CHECK(pa::version() == PORTAL_AUTH_VERSION_STRING);
    CHECK(pa::version_number() == PORTAL_AUTH_VERSION_NUMBER);
}

/* Magic link, TOTP enrollment, the session in the keyring, restore and sign-out. */
void magic_link_flow() {
    pa::Options options = test::emulator_options("env-demo");
    options.storage = pa::Storage::keyring();
    pa::Client client(options);
    client.set_completion_queue(true);
    const bool queued = true;

    bool ran_inside = true;
    pa::Outcome<pa::Methods> methods = test::wait<pa::Methods>(queued, [&](auto done) { return client.get_methods(done); }, &ran_inside);
    CHECK(!ran_inside);
    CHECK(methods.ok() && methods.value().allowed_auth_methods == std::vector<std::string>({"EMAIL_MAGIC_LINK", "GOOGLE", "APPLE"}));
    CHECK(methods.ok() && methods.value().auto_create_wallet);

    pa::Outcome<void> sent = test::wait<void>(queued, [&](auto done) { return client.send_magic_link(email("flow"), done); });
    CHECK(sent.ok());
    std::string link = test::json_string(test::emulator("/_emulator/outbox?email=" + query_email("flow")), "link");
    CHECK(link.rfind("myapp://auth/callback?token=", 0) == 0);

    /* The redirect: a TOTP step with the enrollment link, its secret and QR codes. */
    auto step_outcome = test::wait<std::optional<pa::Result>>(queued, [&](auto done) { return client.handle_redirect(link, done); });
    CHECK(step_outcome.ok() && step_outcome.value() && std::holds_alternative<pa::TotpRequired>(*step_outcome.value()));
    if (!step_outcome.ok() || !step_outcome.value()) test::give_up("no TOTP step");
    pa::TotpRequired step = std::get<pa::TotpRequired>(*std::move(step_outcome).value());
    CHECK(step.end_user_id.rfind("eu_", 0) == 0 && step.totp_link && step.totp_link->rfind("otpauth://totp/", 0) == 0);
    /* The step expires ten minutes after the sign-in, by its userJwt. */
    const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
    CHECK(step.expires_at >= now + 590 && step.expires_at <= now + 601);
    std::optional<std::string> secret = step.totp_secret();
    CHECK(secret && secret->size() == 32);
    std::vector<std::uint8_t> png = step.qr_png(4);
    const std::uint8_t signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    CHECK(png.size() > sizeof signature && std::equal(signature, signature + sizeof signature, png.begin()));
    CHECK(step.qr_png(4) == pa::totp_qr_png(*step.totp_link, 4));
    CHECK(step.qr_svg(2).find("<svg") != std::string::npos);
    /* The modules: a whole number of rows, a quiet zone of light modules, a dark finder corner. */
    pa::QrMatrix matrix = step.qr_matrix();
    CHECK(matrix.side > 21 && matrix.bits.size() == static_cast<std::size_t>(matrix.side * ((matrix.side + 7) / 8)));
    CHECK(matrix.side > 21 && !matrix.dark(0, 0) && !matrix.dark(3, 3) && matrix.dark(4, 4) && !matrix.dark(matrix.side - 1, 0));
    std::string terminal = step.qr_terminal(pa::TerminalColors::dark_on_light);
    CHECK(!terminal.empty() && terminal.back() == '\n');

    /* A wrong code: unauthorized, rejected, the step still usable. */
    std::string right = secret ? test::totp_code(*secret) : "000000";
    std::string wrong_code = std::to_string(1000000 + (std::stoi(right) + 500000) % 1000000).substr(1);
    auto wrong = test::wait<pa::Result>(queued, [&](auto done) { return client.verify_totp(wrong_code, step.user_jwt, done); });
    CHECK(!wrong.ok() && wrong.error()->code() == pa::Code::unauthorized && wrong.error()->http_status() == 401);
    CHECK(!wrong.ok() && wrong.error()->reason() == pa::Reason::totp_code_rejected && !wrong.error()->url());
    CHECK(pa::reason_user_message(pa::Reason::totp_code_rejected).has_value());
    bool threw = false;
    try {
        wrong.value();
    } catch (const pa::Error &error) {
        threw = error.code() == pa::Code::unauthorized && !error.message().empty();
    }
    CHECK(threw);

    /* The code an authenticator app computes from the secret the user entered, typed as the
       app shows it ("123 456") and tidied. */
    std::string shown = test::totp_code(*secret);
    std::optional<std::string> typed = pa::normalize_totp_code(shown.substr(0, 3) + " " + shown.substr(3));
    CHECK(typed == shown);
    auto verified = test::wait<pa::Result>(queued, [&](auto done) { return client.verify_totp(typed.value_or(""), step.user_jwt, done); });
    CHECK(verified.ok() && std::holds_alternative<pa::Authenticated>(verified.value()));
    if (!verified.ok()) test::give_up(verified.error()->what());
    pa::Authenticated signed_in = std::get<pa::Authenticated>(std::move(verified).value());
    CHECK(signed_in.session.end_user_id() == step.end_user_id);
    CHECK(signed_in.client_id && signed_in.client_id->rfind("cl_", 0) == 0);
    CHECK(signed_in.is_account_abstracted == std::optional<bool>(false));
    CHECK(signed_in.session.token().rfind("cst_", 0) == 0);

    /* The redirect again: replayed, the very same session. */
    auto replay = test::wait<std::optional<pa::Result>>(queued, [&](auto done) { return client.handle_redirect(link, done); });
    CHECK(replay.ok() && replay.value() && std::get<pa::Authenticated>(*replay.value()).session == signed_in.session);
    /* ...but from a client that never saw it, the link is used: request a new one. */
    {
        pa::Client stranger(test::emulator_options("env-demo"));
        auto used = test::wait<std::optional<pa::Result>>(false, [&](auto done) { return stranger.handle_redirect(link, done); });
        CHECK(!used.ok() && used.error()->code() == pa::Code::unauthorized && used.error()->reason() == pa::Reason::link_used);
    }

    /* Another client, on the I/O thread, restores it from the keyring. */
    pa::Client second(options);
    auto restored = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return second.restore_session(done); });
    CHECK(restored.ok() && restored.value() && restored.value()->end_user_id() == step.end_user_id);
    CHECK(restored.ok() && restored.value() && restored.value()->token() == signed_in.session.token());

    /* Sign-out: every handle of the token forgets it, and the keyring's entry goes. */
    auto invalidated = test::wait<void>(queued, [&](auto done) { return signed_in.session.invalidate(done); });
    CHECK(invalidated.ok());
    for (const pa::Session &session : {signed_in.session, *restored.value()}) {
        threw = false;
        try {
            (void)session.token();
        } catch (const pa::Error &error) {
            threw = error.code() == pa::Code::session_invalidated;
        }
        CHECK(threw);
    }
    auto gone = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return second.restore_session(done); });
    CHECK(gone.ok() && !gone.value());
    CHECK(test::wait<void>(queued, [&](auto done) { return client.clear_persisted_session(done); }).ok());
}

/* Each error with its fields: name, method, detail, path and missing, HTTP status, body and
   retry-after, a network failure's reason. */
void error_fields() {
    /* The options field a client's INVALID_ARGUMENT names, or nothing. */
    auto refusal = [](const pa::Options &options) -> std::optional<std::string> {
        try {
            pa::Client client(options);
        } catch (const pa::Error &error) {
            if (error.code() == pa::Code::invalid_argument) return error.name();
        }
        return std::nullopt;
    };
    CHECK(refusal(test::emulator_options(" ")) == std::optional<std::string>("auth_environment_id"));
    pa::Options unnamed = test::emulator_options("env-open");
    unnamed.application_id = "not reverse DNS";
    CHECK(refusal(unnamed) == std::optional<std::string>("application_id"));
    pa::Options untrusting = test::emulator_options("env-open");
    untrusting.ca_file = "/nonexistent/company-ca.pem";
    CHECK(refusal(untrusting) == std::optional<std::string>("ca_file"));

    pa::Client open(test::emulator_options("env-open"));
    bool named = false;
    try {
        open.send_magic_link(std::string("a\0b@example.com", 15), [](pa::Outcome<void>) { test::give_up("a refused call completed"); });
    } catch (const pa::Error &error) {
        named = error.code() == pa::Code::invalid_argument && error.name() == std::optional<std::string>("email");
    }
    CHECK(named);
    /* Not UTF-8: the library refuses to start the call, which then never completes. */
    bool refused = false;
    try {
        open.handle_redirect("myapp://auth/callback?token=\xff", [](auto) { test::give_up("a refused call completed"); });
    } catch (const pa::Error &error) {
        refused = error.code() == pa::Code::invalid_argument;
    }
    CHECK(refused);
    refused = false;
    try {
        open.get_methods(nullptr);
    } catch (const pa::Error &error) {
        refused = error.name() == std::optional<std::string>("done");
    }
    CHECK(refused);

    auto blank_email = test::wait<void>(false, [&](auto done) { return open.send_magic_link(" ", done); });
    const pa::Error *error = failure(blank_email, pa::Code::invalid_argument);
    CHECK(error && error->name() == std::optional<std::string>("email"));

    auto apple = test::wait<std::string>(false, [&](auto done) { return open.login_with_apple(done); });
    error = failure(apple, pa::Code::auth_method_unavailable);
    CHECK(error && error->method() == std::optional<std::string>("APPLE") && !error->detail());
    auto google = test::wait<std::string>(false, [&](auto done) { return open.login_with_google(done); });
    CHECK(google.ok() && google.value().find("/oauth/google/authorize?state=") != std::string::npos);

    auto denied = test::wait<std::optional<pa::Result>>(false, [&](auto done) { return open.handle_redirect("myapp://auth/callback?error=access_denied", done); });
    error = failure(denied, pa::Code::authentication_failed);
    CHECK(error && error->detail() == std::optional<std::string>("access_denied"));
    auto foreign = test::wait<std::optional<pa::Result>>(false, [&](auto done) { return open.handle_redirect("otherapp://x?token=t", done); });
    CHECK(foreign.ok() && !foreign.value());

    auto unreadable = test::wait<pa::Result>(false, [&](auto done) { return open.verify_totp("123456", "not-a-jwt", done); });
    error = failure(unreadable, pa::Code::invalid_user_jwt);
    CHECK(error && error->detail() && error->detail()->find("malformed") != std::string::npos);

    test::emulator("/_emulator/faults", R"({"path":"/methods","kind":"status","status":500,"retryAfter":"120"})");
    auto status = test::wait<pa::Methods>(false, [&](auto done) { return open.get_methods(done); });
    error = failure(status, pa::Code::http_status);
    CHECK(error && error->http_status() == 500 && error->body() == std::optional<std::string>(R"({"error":"injected"})"));
    CHECK(error && error->retry_after() == std::optional<std::int64_t>(120));

    test::emulator("/_emulator/faults", R"({"path":"/methods","kind":"malformed","body":"[]"})");
    auto envelope = test::wait<pa::Methods>(false, [&](auto done) { return open.get_methods(done); });
    error = failure(envelope, pa::Code::malformed_response);
    CHECK(error && error->path() == std::optional<std::string>("/api/v3/auth/methods") && !error->missing());

    test::emulator("/_emulator/faults", R"({"path":"/magic-links/validations","kind":"malformed","body":"{\"data\":{\"clientSessionToken\":\"cst_x\"}}"})");
    auto lacking = test::wait<std::optional<pa::Result>>(false, [&](auto done) {
        return open.handle_redirect(test::grant_redirect("env-open", email("malformed")), done);
    });
    error = failure(lacking, pa::Code::malformed_response);
    CHECK(error && error->path() && error->missing() == std::optional<std::string>("endUserId"));

    /* Nobody listens on port 1: no response, the connection refused. */
    pa::Options closed = test::emulator_options("env-open");
    closed.api_host = "http://127.0.0.1:1";
    pa::Client unreachable(closed);
    auto network = test::wait<pa::Methods>(false, [&](auto done) { return unreachable.get_methods(done); });
    error = failure(network, pa::Code::network);
    CHECK(error && error->http_status() == 0 && !error->body() && !error->retry_after());
    CHECK(error && error->reason() == pa::Reason::connection_refused);

    /* Browser sign-in needs a loopback redirect URL: refused before any request. */
    auto not_loopback = test::wait<pa::Result>(false, [&](auto done) { return open.sign_in_with_google(0, done); });
    error = failure(not_loopback, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::redirect_not_loopback);

    /* TOTP enrollment of something that is no enrollment link. */
    bool unavailable = false;
    try {
        pa::totp_qr_png("https://example.com", 10);
    } catch (const pa::Error &failed) {
        unavailable = failed.code() == pa::Code::totp_qr_unavailable;
    }
    CHECK(unavailable);
    /* A scale it cannot take is TOTP_QR_UNAVAILABLE, as in the seed SDK, the message giving the range. */
    bool scale_refused = false;
    try {
        pa::totp_qr_png("otpauth://totp/Portal:a?secret=JBSWY3DPEHPK3PXP&issuer=Portal", 0);
    } catch (const pa::Error &failed) {
        scale_refused = failed.code() == pa::Code::totp_qr_unavailable &&
                        failed.message().find("from 1 to ") != std::string::npos;
    }
    CHECK(scale_refused);
    CHECK(!pa::totp_secret("otpauth://totp/Portal:a?issuer=Portal"));
    CHECK(!(pa::TotpRequired{"jwt", std::nullopt, ""}.totp_secret()));
}

/* The emulator's clock, offset by `seconds` for what it issues. */
void clock_offset(int seconds) {
    test::emulator("/_emulator/control", "{\"clockOffsetSeconds\":" + std::to_string(seconds) + "}");
}

/* Reasons: each one's name and sentence from the library; the typed-code helper; a TOTP step
   expired eleven minutes on by the server's clock. */
void reasons() {
    const std::pair<pa::Reason, const char *> named[] = {
        {pa::Reason::keyring_locked, "KEYRING_LOCKED"},
        {pa::Reason::no_secret_service, "NO_SECRET_SERVICE"},
        {pa::Reason::no_session_bus, "NO_SESSION_BUS"},
        {pa::Reason::dbus_failure, "DBUS_FAILURE"},
        {pa::Reason::libsecret_missing, "LIBSECRET_MISSING"},
        {pa::Reason::host_storage_failed, "HOST_STORAGE_FAILED"},
        {pa::Reason::entry_not_cleared, "ENTRY_NOT_CLEARED"},
        {pa::Reason::keyring_needs_confirmation, "KEYRING_NEEDS_CONFIRMATION"},
        {pa::Reason::keyring_prompt_dismissed, "KEYRING_PROMPT_DISMISSED"},
        {pa::Reason::keyring_encryption_failed, "KEYRING_ENCRYPTION_FAILED"},
        {pa::Reason::file_store_unsafe, "FILE_STORE_UNSAFE"},
        {pa::Reason::file_store_failed, "FILE_STORE_FAILED"},
        {pa::Reason::redirect_not_loopback, "REDIRECT_NOT_LOOPBACK"},
        {pa::Reason::port_in_use, "PORT_IN_USE"},
        {pa::Reason::listener_failed, "LISTENER_FAILED"},
        {pa::Reason::no_browser, "NO_BROWSER"},
        {pa::Reason::opener_failed, "OPENER_FAILED"},
        {pa::Reason::no_runtime_directory, "NO_RUNTIME_DIRECTORY"},
        {pa::Reason::runtime_directory_unsafe, "RUNTIME_DIRECTORY_UNSAFE"},
        {pa::Reason::channel_in_use, "CHANNEL_IN_USE"},
        {pa::Reason::channel_failed, "CHANNEL_FAILED"},
        {pa::Reason::sign_in_cancelled, "SIGN_IN_CANCELLED"},
        {pa::Reason::sign_in_timed_out, "SIGN_IN_TIMED_OUT"},
        {pa::Reason::client_closed, "CLIENT_CLOSED"},
        {pa::Reason::link_used, "LINK_USED"},
        {pa::Reason::totp_code_rejected, "TOTP_CODE_REJECTED"},
        {pa::Reason::totp_step_expired, "TOTP_STEP_EXPIRED"},
    };
    for (const auto &[reason, name] : named) {
        CHECK(pa::reason_name(reason) == std::optional<std::string_view>(name));
        std::optional<std::string_view> sentence = pa::reason_user_message(reason);
        CHECK(sentence && !sentence->empty() && sentence->back() == '.' && sentence->find('\n') == std::string_view::npos);
    }
    CHECK(pa::reason_user_message(pa::Reason::keyring_locked) ==
          std::optional<std::string_view>("Your keyring is locked. Unlock it, then try again."));
    CHECK(!pa::reason_name(pa::Reason::none) && !pa::reason_user_message(pa::Reason::none));
    CHECK(!pa::reason_name(static_cast<pa::Reason>(999)) && !pa::reason_user_message(static_cast<pa::Reason>(-1)));
    CHECK(pa::code_name(pa::Code::unauthorized) == std::optional<std::string_view>("UNAUTHORIZED"));
    CHECK(pa::code_name(pa::Code::ok) == std::optional<std::string_view>("OK"));
    CHECK(pa::code_message(pa::Code::network) == std::optional<std::string_view>("No response came from Portal."));
    CHECK(!pa::code_name(static_cast<pa::Code>(12345)) && !pa::code_message(static_cast<pa::Code>(-1)));

    CHECK(pa::normalize_totp_code("123 456") == std::optional<std::string>("123456"));
    CHECK(pa::normalize_totp_code(" 123-456\n") == std::optional<std::string>("123456"));
    CHECK(!pa::normalize_totp_code("12345") && !pa::normalize_totp_code("1234567") && !pa::normalize_totp_code("12a456"));
    CHECK(!pa::normalize_totp_code("") && !pa::normalize_totp_code(std::string_view("123\0" "456", 7)));

    /* Eleven minutes after the step, by the server's clock (its answers' Date): the step's ten
       minutes are over, though this machine's clock has not moved. */
    pa::Client client(test::emulator_options("env-demo"));
    auto late = test::wait<std::optional<pa::Result>>(false, [&](auto done) {
        return client.handle_redirect(test::grant_redirect("env-demo", email("late")), done);
    });
    CHECK(late.ok() && late.value() && std::holds_alternative<pa::TotpRequired>(*late.value()));
    if (!late.ok() || !late.value()) test::give_up("no TOTP step");
    pa::TotpRequired step = std::get<pa::TotpRequired>(*std::move(late).value());
    CHECK(step.expires_at > static_cast<std::int64_t>(std::time(nullptr)));
    clock_offset(660);
    std::string code = test::json_string(
        test::emulator("/_emulator/totp?environmentId=env-demo&email=" + query_email("late")), "code");
    CHECK(code.size() == 6);
    auto expired = test::wait<pa::Result>(false, [&](auto done) { return client.verify_totp(code, step.user_jwt, done); });
    clock_offset(0);
    const pa::Error *error = expired.error();
    CHECK(error && error->code() == pa::Code::unauthorized && error->reason() == pa::Reason::totp_step_expired);
}

/* A store of the host's, in a map; it fails on demand, and says when it is destroyed. */
struct MapStore : pa::SessionStore {
    std::mutex lock;
    std::map<std::string, std::string> values;
    std::atomic<int> sets{0}, removes{0};
    std::atomic<bool> failing{false};
    std::promise<void> destroyed;

    ~MapStore() override { destroyed.set_value(); }

    std::optional<std::string> get(const std::string &environment_id) override {
        if (failing) throw std::runtime_error("the store is down");
        std::lock_guard<std::mutex> guard(lock);
        auto found = values.find(environment_id);
        return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
    }
    void set(const std::string &environment_id, const std::string &value) override {
        std::lock_guard<std::mutex> guard(lock);
        sets++;
        values[environment_id] = value;
    }
    void remove(const std::string &environment_id) override {
        std::lock_guard<std::mutex> guard(lock);
        removes++;
        values.erase(environment_id);
    }
    std::string stored(const std::string &environment_id) {
        std::lock_guard<std::mutex> guard(lock);
        auto found = values.find(environment_id);
        return found == values.end() ? "" : found->second;
    }
};

void host_storage() {
    auto store = std::make_shared<MapStore>();
    std::future<void> destroyed = store->destroyed.get_future();
    pa::Options options = test::emulator_options("env-open");
    options.storage = pa::Storage::host(store);
    {
        pa::Client client(options);
        auto signed_in = test::wait<std::optional<pa::Result>>(false, [&](auto done) {
            return client.handle_redirect(test::grant_redirect("env-open", email("host")), done);
        });
        CHECK(signed_in.ok() && signed_in.value() && std::holds_alternative<pa::Authenticated>(*signed_in.value()));
        CHECK(store->sets == 1 && store->stored("env-open").find("clientSessionToken") != std::string::npos);
        std::optional<pa::Session> session;
        if (signed_in.ok() && signed_in.value()) session = std::get<pa::Authenticated>(*signed_in.value()).session;

        /* A client freed at once, its call in flight, still completes. */
        auto restored = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return pa::Client(options).restore_session(done); });
        CHECK(restored.ok() && restored.value() && session && restored.value()->token() == session->token());

        store->failing = true;
        auto down = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return client.restore_session(done); });
        const pa::Error *error = failure(down, pa::Code::session_storage_failure);
        CHECK(error && error->reason() == pa::Reason::host_storage_failed);
        store->failing = false;

        if (session) CHECK(test::wait<void>(false, [&](auto done) { return session->invalidate(done); }).ok());
        CHECK(store->removes == 1 && store->stored("env-open").empty());
    }
    /* The clients and their sessions gone, the library lets the store go: it is destroyed once
       this last reference is dropped. */
    options.storage = pa::Storage::keyring();
    store.reset();
    CHECK(destroyed.wait_for(std::chrono::seconds(30)) == std::future_status::ready);

    /* portal_auth_new fails before it reads the callbacks (not UTF-8), and after (blank): either
       way the store is let go before it returns, exactly once (valgrind sees the rest). */
    for (const char *environment : {"\xff", " "}) {
        auto refused_store = std::make_shared<MapStore>();
        options.auth_environment_id = environment;
        options.storage = pa::Storage::host(refused_store);
        bool refused = false;
        try {
            pa::Client client(options);
        } catch (const pa::Error &failed) {
            refused = failed.code() == pa::Code::invalid_argument && failed.name() == std::optional<std::string>("auth_environment_id");
        }
        options.storage = pa::Storage::keyring();
        CHECK(refused && refused_store.use_count() == 1);
    }
    options.storage = pa::Storage::host(nullptr);
    bool named = false;
    try {
        pa::Client client(options);
    } catch (const pa::Error &failed) {
        named = failed.name() == std::optional<std::string>("host_storage");
    }
    CHECK(named);
}

/* Loads url as a browser would, following the fake provider back to the loopback listener. */
long browse(const std::string &url) {
    std::unique_ptr<CURL, void (*)(CURL *)> easy(curl_easy_init(), curl_easy_cleanup);
    curl_write_callback ignore = [](char *, size_t size, size_t count, void *) { return size * count; };
    curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, ignore);
    long status = 0;
    if (curl_easy_perform(easy.get()) == CURLE_OK) curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &status);
    return status;
}

void browser_sign_in() {
    std::string redirect = "http://127.0.0.1:" + std::to_string(free_port()) + "/callback";
    std::string environment = "env-cpp-browser-" + label;
    test::emulator("/_emulator/environments", "{\"id\":\"" + environment + "\",\"allowedMethods\":[\"GOOGLE\",\"APPLE\"],\"redirectUrls\":[\"" +
                                                  redirect + "\"],\"totpRequired\":false,\"accountAbstraction\":false,\"autoCreateWallet\":false}");
    pa::Options options = test::emulator_options(environment);
    options.redirect_url = redirect;
    pa::Client client(options);
    CHECK(!client.prefers_ephemeral_web_browser_session());
    client.set_prefers_ephemeral_web_browser_session(true);
    CHECK(client.prefers_ephemeral_web_browser_session());

    /* The opener is a lambda: it sees the flag and loads the page. */
    std::string opened;
    bool ephemeral = false;
    long page = 0;
    client.set_browser_opener([&](const std::string &url, bool private_window) {
        opened = url;
        ephemeral = private_window;
        page = browse(url);
        return 0;
    });
    auto google = test::wait<pa::Result>(false, [&](auto done) { return client.sign_in_with_google(0, done); });
    CHECK(google.ok() && std::holds_alternative<pa::Authenticated>(google.value()));
    CHECK(opened.find("/oauth/google/authorize?state=") != std::string::npos && ephemeral && page == 200);

    /* An opener that fails, or throws: unavailable, opener_failed. */
    client.set_browser_opener([](const std::string &, bool) { return 7; });
    auto failed = test::wait<pa::Result>(false, [&](auto done) { return client.sign_in_with_apple(0, done); });
    const pa::Error *error = failure(failed, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::opener_failed && error->message().find('7') != std::string::npos);
    CHECK(error && !error->url());
    client.set_browser_opener([](const std::string &, bool) -> int { throw std::runtime_error("no display"); });
    auto threw = test::wait<pa::Result>(false, [&](auto done) { return client.sign_in_with_apple(0, done); });
    error = failure(threw, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::opener_failed);

    /* An opener with no browser to open: no_browser at once, with the URL to show instead. */
    std::string unopened;
    client.set_browser_opener([&unopened](const std::string &url, bool) {
        unopened = url;
        return pa::opener_no_browser;
    });
    auto nowhere = test::wait<pa::Result>(false, [&](auto done) { return client.sign_in_with_google(0, done); });
    error = failure(nowhere, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::no_browser && error->url() == std::optional<std::string>(unopened));
    CHECK(unopened.find("/oauth/google/authorize?state=") != std::string::npos);

    /* A browser that never comes back, cancelled: closed, nothing exchanged. */
    std::promise<void> launched;
    client.set_browser_opener([&launched](const std::string &, bool) {
        launched.set_value();
        return 0;
    });
    auto promise = std::make_shared<std::promise<pa::Outcome<pa::Result>>>();
    std::future<pa::Outcome<pa::Result>> waiting = promise->get_future();
    pa::Call call = client.sign_in_with_google(60000, [promise](pa::Outcome<pa::Result> outcome) { promise->set_value(std::move(outcome)); });
    if (launched.get_future().wait_for(std::chrono::seconds(30)) != std::future_status::ready) test::give_up("the opener was not called");
    call.cancel();
    if (waiting.wait_for(std::chrono::seconds(30)) != std::future_status::ready) test::give_up("the cancelled sign-in did not complete");
    const pa::Outcome<pa::Result> cancelled = waiting.get();
    const pa::Error *closed = failure(cancelled, pa::Code::sign_in_closed);
    CHECK(closed != nullptr && closed->reason() == pa::Reason::sign_in_cancelled);

    /* A sign-in calls the opener installed when its call was made, which the call keeps; one
       installed after it is let go when replaced, whenever the sign-in's work starts (under
       AddressSanitizer in make test). The client's queue is run only at the end: a library
       thread starts the work meanwhile, after the first replacement. */
    test::emulator("/_emulator/requests", "", "DELETE");
    test::emulator("/_emulator/faults", "{\"path\":\"/oauth/urls\",\"kind\":\"hold\"}");
    pa::CompletionQueue queue;
    pa::Options queued_options = options;
    queued_options.completion_queue = &queue;
    pa::Client queued(queued_options);
    std::atomic<int> first{0}, later{0};
    queued.set_browser_opener([&first](const std::string &url, bool) {
        first++;
        return browse(url) == 200 ? 0 : 1;
    });
    std::optional<pa::Outcome<pa::Result>> held;
    queued.sign_in_with_google(0, [&held](pa::Outcome<pa::Result> outcome) { held = std::move(outcome); });
    auto replace = [&queued, &later] {
        queued.set_browser_opener([&later](const std::string &, bool) {
            later++;
            return 0;
        });
    };
    replace();
    test::emulator("/_emulator/wait?path=/oauth/urls&count=1&timeout=30");
    replace();
    test::emulator("/_emulator/release", "{}");
    pollfd watched{queue.fd(), POLLIN, 0};
    while (!held && poll(&watched, 1, 60000) == 1) queue.run();
    if (!held) test::give_up("the held sign-in did not complete");
    CHECK(held->ok() && first == 1 && later == 0);
    client.set_browser_opener(nullptr);
}

/* How many of the things dispatchers captured (Captured) have been destroyed. */
struct Released {
    std::mutex lock;
    std::condition_variable changed;
    int count = 0;

    int now() {
        std::lock_guard<std::mutex> guard(lock);
        return count;
    }

    /* Waits for the count to reach `expected` (the library releases a dispatcher on whichever
       thread lets go of it last); false after 30 s. */
    bool reaches(int expected) {
        std::unique_lock<std::mutex> guard(lock);
        return changed.wait_for(guard, std::chrono::seconds(30), [&] { return count == expected; });
    }
};

/* State a dispatcher captures: its destruction is counted. */
struct Captured {
    explicit Captured(Released &counted) : released(counted) {}
    Captured(const Captured &) = delete;
    Captured &operator=(const Captured &) = delete;
    ~Captured() {
        std::lock_guard<std::mutex> guard(released.lock);
        released.count++;
        released.changed.notify_all();
    }
    Released &released;
};

std::shared_ptr<Captured> capture(Released &released) { return std::make_shared<Captured>(released); }

/* A dispatcher that hands each job to this thread, which runs it; then the I/O thread again.
   What each dispatcher captured is destroyed once the library no longer uses it. */
void dispatcher() {
    Released released;
    pa::Client client(test::emulator_options("env-open"));
    /* Replaced with nothing in flight: released before set_dispatcher returns. */
    client.set_dispatcher([held = capture(released)](pa::Job) { (void)held; });
    CHECK(released.now() == 0);
    std::mutex lock;
    std::condition_variable posted;
    std::deque<pa::Job> jobs;
    client.set_dispatcher([&, held = capture(released)](pa::Job job) {
        (void)held;
        std::lock_guard<std::mutex> guard(lock);
        jobs.push_back(std::move(job));
        posted.notify_one();
    });
    CHECK(released.now() == 1);
    std::thread::id ran_on;
    bool done = false;
    client.get_methods([&](pa::Outcome<pa::Methods> outcome) {
        CHECK(outcome.ok());
        ran_on = std::this_thread::get_id();
        done = true;
    });
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!posted.wait_for(guard, std::chrono::seconds(30), [&] { return !jobs.empty(); })) test::give_up("nothing was dispatched");
    }
    CHECK(!done);
    pa::Job job = std::move(jobs.front());
    jobs.pop_front();
    job();
    job(); /* a second run does nothing */
    CHECK(done && ran_on == std::this_thread::get_id() && jobs.empty());

    /* A job destroyed unrun (its receiver gone): the completion is released, never called. */
    Released completions;
    bool called = false;
    client.get_methods([&called, held = capture(completions)](pa::Outcome<pa::Methods>) {
        (void)held;
        called = true;
    });
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!posted.wait_for(guard, std::chrono::seconds(30), [&] { return !jobs.empty(); })) test::give_up("nothing was dispatched");
        jobs.pop_front();
    }
    CHECK(!called && completions.now() == 1);

    client.set_completion_queue(false);
    /* Replaced, its one job run: released once the library has let go of it. */
    CHECK(released.reaches(2));
    std::thread::id io_thread;
    auto methods = test::wait<pa::Methods>(false, [&](auto finished) {
        return client.get_methods([&io_thread, finished](pa::Outcome<pa::Methods> outcome) {
            io_thread = std::this_thread::get_id();
            finished(std::move(outcome));
        });
    });
    CHECK(methods.ok() && io_thread != std::this_thread::get_id());

    /* Still installed when the client goes: released with it. */
    {
        pa::Client last(test::emulator_options("env-open"));
        last.set_dispatcher([held = capture(released)](pa::Job posted_job) { (void)held; posted_job(); });
    }
    CHECK(released.reaches(3));
}

/* A component's own completion queue: the client's calls complete only in its runs, on the
   thread that runs it; once the queue is let go, on the I/O thread. */
void component_queue() {
    std::optional<pa::Client> client;
    std::thread::id ran_on;
    {
        pa::CompletionQueue queue;
        pa::Options options = test::emulator_options("env-open");
        options.completion_queue = &queue;
        client.emplace(options);
        std::optional<pa::Outcome<pa::Methods>> methods;
        client->get_methods([&](pa::Outcome<pa::Methods> outcome) {
            methods = std::move(outcome);
            ran_on = std::this_thread::get_id();
        });
        CHECK(!methods);
        pollfd watched{queue.fd(), POLLIN, 0};
        while (!methods && poll(&watched, 1, 30000) == 1) queue.run();
        CHECK(methods && methods->ok() && ran_on == std::this_thread::get_id());
    }
    auto after = test::wait<pa::Methods>(false, [&](auto finished) {
        return client->get_methods([&ran_on, finished](pa::Outcome<pa::Methods> outcome) {
            ran_on = std::this_thread::get_id();
            finished(std::move(outcome));
        });
    });
    CHECK(after.ok() && ran_on != std::this_thread::get_id());
}

/* Redirect forwarding: a forwarded magic link reaches the listening client, which signs the
   user in; refused and unclaimed URLs; listening ended by cancelling it. */
void forwarding() {
    pa::Options options = test::emulator_options("env-open");
    options.application_id = "io.portalhq.cpptest." + label;
    pa::Client client(options);
    std::mutex lock;
    std::condition_variable changed;
    std::deque<pa::Outcome<std::optional<pa::Result>>> handled;
    std::optional<pa::Outcome<void>> ended;
    pa::Call listening = client.listen_for_redirects(
        [&](pa::Outcome<std::optional<pa::Result>> outcome) {
            std::lock_guard<std::mutex> guard(lock);
            handled.push_back(std::move(outcome));
            changed.notify_all();
        },
        [&](pa::Outcome<void> outcome) {
            std::lock_guard<std::mutex> guard(lock);
            ended = std::move(outcome);
            changed.notify_all();
        });
    auto forward = [&](const std::string &url) {
        return test::wait<pa::ForwardResult>(false, [&](auto done) {
            pa::forward_redirect(options, url, done);
            return pa::Call();
        });
    };

    CHECK(test::wait<void>(false, [&](auto done) { return client.send_magic_link(email("forward"), done); }).ok());
    std::string link = test::json_string(test::emulator("/_emulator/outbox?email=" + query_email("forward")), "link");
    auto taken = forward(link);
    CHECK(taken.ok() && taken.value() == pa::ForwardResult::taken);
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!changed.wait_for(guard, std::chrono::seconds(30), [&] { return !handled.empty(); })) test::give_up("no forwarded redirect");
        CHECK(handled.front().ok() && handled.front().value() && std::holds_alternative<pa::Authenticated>(*handled.front().value()));
        handled.clear();
    }
    auto refused = forward("https://example.com/elsewhere?token=x");
    CHECK(refused.ok() && refused.value() == pa::ForwardResult::refused);

    listening.cancel();
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!changed.wait_for(guard, std::chrono::seconds(30), [&] { return ended.has_value(); })) test::give_up("listening did not end");
        CHECK(ended->error() && ended->error()->code() == pa::Code::sign_in_closed && handled.empty());
    }
    auto unclaimed = forward("myapp://auth/callback");
    CHECK(unclaimed.ok() && unclaimed.value() == pa::ForwardResult::no_instance);
    bool refused_empty = false;
    try {
        client.listen_for_redirects(nullptr, [](pa::Outcome<void>) {});
    } catch (const pa::Error &error) {
        refused_empty = error.code() == pa::Code::invalid_argument && error.name() == "each";
    }
    CHECK(refused_empty);
}

/* Completions that throw: caught by the layer, the process goes on, and the handler gets the
   exception (on the I/O thread, from the completion queue, from a dispatcher); the default
   handler logs it at error level. */
void completion_exceptions() {
    std::mutex lock;
    std::condition_variable changed;
    std::vector<std::exception_ptr> caught;
    pa::set_completion_exception_handler([&](std::exception_ptr exception) {
        std::lock_guard<std::mutex> guard(lock);
        caught.push_back(exception);
        changed.notify_all();
    });
    auto seen = [&](std::size_t count) {
        std::unique_lock<std::mutex> guard(lock);
        return changed.wait_for(guard, std::chrono::seconds(30), [&] { return caught.size() >= count; });
    };
    auto code_of = [](std::exception_ptr exception) {
        try {
            std::rethrow_exception(exception);
        } catch (const pa::Error &error) {
            return error.code();
        } catch (...) {
        }
        return pa::Code::ok;
    };

    /* On the I/O thread: a completion that takes the value of an error, which throws it. */
    pa::Client client(test::emulator_options("env-open"));
    client.login_with_apple([](pa::Outcome<std::string> outcome) { (void)outcome.value(); });
    CHECK(seen(1) && code_of(caught[0]) == pa::Code::auth_method_unavailable);

    /* From the completion queue: run_completions returns as usual. */
    pa::Client queued(test::emulator_options("env-open"));
    queued.set_completion_queue(true);
    bool ran = false;
    queued.get_methods([&ran](pa::Outcome<pa::Methods>) {
        ran = true;
        throw 42;
    });
    pollfd watched{pa::completion_fd(), POLLIN, 0};
    while (!ran && poll(&watched, 1, 30000) == 1) pa::run_completions();
    CHECK(ran && seen(2));
    bool was_int = false;
    try {
        std::rethrow_exception(caught[1]);
    } catch (int value) {
        was_int = value == 42;
    } catch (...) {
    }
    CHECK(was_int);

    /* A dispatcher that throws: the job it dropped releases its completion uncalled. */
    bool called = false;
    client.set_dispatcher([](pa::Job) { throw std::runtime_error("dispatcher down"); });
    client.get_methods([&called](pa::Outcome<pa::Methods>) { called = true; });
    CHECK(seen(3) && !called);
    bool said = false;
    try {
        std::rethrow_exception(caught[2]);
    } catch (const std::runtime_error &error) {
        said = std::string(error.what()) == "dispatcher down";
    } catch (...) {
    }
    CHECK(said);
    client.set_dispatcher(nullptr);

    /* The default: one line at error level to the log handler. */
    pa::set_completion_exception_handler(nullptr);
    auto lines = std::make_shared<std::promise<std::string>>();
    auto once = std::make_shared<std::once_flag>();
    pa::set_log_handler([lines, once](pa::LogLevel level, std::string_view message) {
        test::audit(level, message);
        if (level == pa::LogLevel::error) std::call_once(*once, [&] { lines->set_value(std::string(message)); });
    });
    std::future<std::string> line = lines->get_future();
    client.get_methods([](pa::Outcome<pa::Methods>) { throw std::runtime_error("the completion failed"); });
    CHECK(line.wait_for(std::chrono::seconds(30)) == std::future_status::ready &&
          line.get() == "A completion threw: the completion failed");
    pa::set_log_handler(test::audit);
}

/* Log lines: on the library thread, filtered by level, and through the completion queue. */
void logging() {
    struct Lines {
        std::mutex lock;
        std::vector<std::pair<pa::LogLevel, std::thread::id>> seen;
    };
    auto lines = std::make_shared<Lines>();
    auto collect = [lines](pa::LogLevel level, std::string_view message) {
        test::audit(level, message);
        std::lock_guard<std::mutex> guard(lines->lock);
        lines->seen.emplace_back(level, std::this_thread::get_id());
    };
    auto count = [lines](pa::LogLevel level) {
        std::lock_guard<std::mutex> guard(lines->lock);
        return std::count_if(lines->seen.begin(), lines->seen.end(), [level](const auto &line) { return line.first == level; });
    };
    pa::Client client(test::emulator_options("env-open"));
    auto exchange = [&](bool queued) {
        auto result = test::wait<std::optional<pa::Result>>(queued, [&](auto done) {
            return client.handle_redirect(test::grant_redirect("env-open", email("log")), done);
        });
        CHECK(result.ok() && result.value());
    };

    pa::set_log_handler(collect);
    exchange(false);
    CHECK(count(pa::LogLevel::info) > 0);

    pa::set_log_level(pa::LogLevel::warning);
    auto before = count(pa::LogLevel::info);
    exchange(false);
    CHECK(count(pa::LogLevel::info) == before);
    pa::set_log_level(pa::LogLevel::debug);

    /* Queued: each line arrives on the thread that runs the queue. */
    pa::set_queued_log_handler(collect);
    client.set_completion_queue(true);
    {
        std::lock_guard<std::mutex> guard(lines->lock);
        lines->seen.clear();
    }
    exchange(true);
    pa::run_completions();
    {
        std::lock_guard<std::mutex> guard(lines->lock);
        CHECK(!lines->seen.empty() && std::all_of(lines->seen.begin(), lines->seen.end(), [](const auto &line) {
                  return line.second == std::this_thread::get_id();
              }));
    }
    bool refused = false;
    try {
        pa::set_log_level(static_cast<pa::LogLevel>(42));
    } catch (const pa::Error &error) {
        refused = error.code() == pa::Code::invalid_argument;
    }
    CHECK(refused);
    pa::set_log_handler(test::audit);
}

} // namespace

int main(int argc, char **argv) {
    return test::main_of(argc, argv, "sign_in_test", [] {
        version();
        magic_link_flow();
        error_fields();
        reasons();
        host_storage();
        browser_sign_in();
        dispatcher();
        component_queue();
        forwarding();
        completion_exceptions();
        logging();
    });
}
