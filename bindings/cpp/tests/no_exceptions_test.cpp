/* The C++ layer built with -fno-exceptions (as KDE's ECM builds by default), against the
 * Portal emulator whose base URL is in PORTAL_AUTH_TEST_API_HOST: every call's std::nothrow
 * form (scripts/test-cpp.sh checks that each one the header declares is called here), with
 * its value and with its error: an argument refused before C, a start the library refuses
 * (whose completion never comes), an error the completion receives; Client::create and
 * CompletionQueue::create; the throwing forms and Outcome::value() left undeclared; an
 * Outcome read after checking, and *outcome on an error ending the program; completions, a
 * dispatcher, a browser opener, a session store failing with SessionStore::fail(), and log
 * handlers, all run with no try/catch around them. The first argument names the run. */
#include "support.hpp"

#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <map>
#include <type_traits>

static_assert(!PORTAL_AUTH_HPP_EXCEPTIONS, "this test is built with -fno-exceptions");

namespace {

using test::failure;

/* Whether Form<Type> is a valid expression: the throwing forms must not be declared. */
template <typename Type, template <typename> class Form, typename = void>
struct declares : std::false_type {};
template <typename Type, template <typename> class Form>
struct declares<Type, Form, std::void_t<Form<Type>>> : std::true_type {};

template <typename Outcome>
using value_form = decltype(std::declval<Outcome &>().value());
template <typename Client>
using throwing_get_methods = decltype(std::declval<Client &>().get_methods(pa::Done<pa::Methods>()));
template <typename Client>
using nothrow_get_methods = decltype(std::declval<Client &>().get_methods(std::nothrow, pa::Done<pa::Methods>()));
template <typename Session>
using throwing_token = decltype(std::declval<const Session &>().token());
template <typename Step>
using throwing_qr_svg = decltype(std::declval<const Step &>().qr_svg());
template <typename Text>
using throwing_totp_secret = decltype(pa::totp_secret(std::declval<const Text &>()));
template <typename Level>
using throwing_set_log_level = decltype(pa::set_log_level(std::declval<Level>()));

static_assert(declares<pa::Client, nothrow_get_methods>::value, "the detection finds a declared form");
static_assert(!declares<pa::Outcome<int>, value_form>::value && !declares<pa::Outcome<void>, value_form>::value,
              "Outcome::value() is declared only with exceptions");
static_assert(!std::is_constructible_v<pa::Client, const pa::Options &> && !std::is_default_constructible_v<pa::CompletionQueue>,
              "the throwing constructors are declared only with exceptions");
static_assert(!declares<pa::Client, throwing_get_methods>::value && !declares<pa::Session, throwing_token>::value &&
                  !declares<pa::TotpRequired, throwing_qr_svg>::value && !declares<std::string, throwing_totp_secret>::value &&
                  !declares<pa::LogLevel, throwing_set_log_level>::value,
              "the throwing forms are declared only with exceptions");

/* The outcome's error, when it is Code::invalid_argument naming the argument `name`. */
template <typename Value>
bool refused(const pa::Outcome<Value> &outcome, const char *name) {
    const pa::Error *error = failure(outcome, pa::Code::invalid_argument);
    return error && error->name() == std::optional<std::string>(name);
}

/* A completion for a call that must not start. */
template <typename Value>
pa::Done<Value> never() {
    return [](pa::Outcome<Value>) { test::give_up("a refused call completed"); };
}

pa::Client make(const pa::Options &options) {
    pa::Outcome<pa::Client> made = pa::Client::create(options);
    if (const pa::Error *error = made.error()) test::give_up(error->what());
    return *std::move(made);
}

/* An Outcome read without exceptions: value_or, *, ->; *outcome on an error ends the
   program, which a child process shows by dying of SIGABRT. */
void outcomes() {
    pa::Outcome<std::string> held(std::string("held"));
    pa::Outcome<std::string> failed(pa::Error(pa::Code::internal, "failed"));
    CHECK(held.ok() && *held == "held" && held->size() == 4 && held.value_or("none") == "held");
    CHECK(!failed && failed.error()->code() == pa::Code::internal && failed.value_or("none") == "none");
    pid_t child = fork();
    if (child == 0) {
        rlimit no_core{0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        std::printf("%zu\n", failed->size());
        _exit(0);
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

/* Client::create: the client, or the Error naming the field; a NUL byte is refused by name. */
void creating() {
    CHECK(pa::Client::create(test::emulator_options("env-open")).ok());
    CHECK(refused(pa::Client::create(test::emulator_options(" ")), "auth_environment_id"));
    pa::Options options = test::emulator_options("env-open");
    options.redirect_url = std::string("myapp://auth\0callback", 21);
    CHECK(refused(pa::Client::create(options), "redirect_url"));
    options = test::emulator_options("env-open");
    options.storage = pa::Storage::host(nullptr);
    CHECK(refused(pa::Client::create(options), "host_storage"));
}

/* Magic link, TOTP enrollment and sign-in through the completion queue; the step's QR codes,
   the session's token, sign-out. */
void magic_link_flow() {
    pa::Client client = make(test::emulator_options("env-demo"));
    CHECK(client.set_completion_queue(std::nothrow, true).ok());
    const bool queued = true;

    auto methods = test::wait<pa::Methods>(queued, [&](auto done) { return client.get_methods(std::nothrow, done); });
    CHECK(methods.ok() && methods->auto_create_wallet && methods->allowed_auth_methods.size() == 3);
    CHECK(refused(client.get_methods(std::nothrow, nullptr), "done"));

    CHECK(refused(client.send_magic_link(std::nothrow, std::string("a\0b@example.com", 15), never<void>()), "email"));
    auto sent = test::wait<void>(queued, [&](auto done) { return client.send_magic_link(std::nothrow, test::email("flow"), done); });
    CHECK(sent.ok());
    std::string link = test::json_string(test::emulator("/_emulator/outbox?email=" + test::query_email("flow")), "link");

    CHECK(refused(client.handle_redirect(std::nothrow, std::string("myapp://\0", 9), never<std::optional<pa::Result>>()), "url"));
    /* Not UTF-8: the library refuses to start the call. */
    CHECK(failure(client.handle_redirect(std::nothrow, "myapp://auth/callback?token=\xff", never<std::optional<pa::Result>>()),
                  pa::Code::invalid_argument));
    auto redirected = test::wait<std::optional<pa::Result>>(queued, [&](auto done) { return client.handle_redirect(std::nothrow, link, done); });
    if (!redirected.ok() || !*redirected || !std::holds_alternative<pa::TotpRequired>(**redirected)) test::give_up("no TOTP step");
    pa::TotpRequired step = std::get<pa::TotpRequired>(**std::move(redirected));
    CHECK(step.totp_link && step.end_user_id.rfind("eu_", 0) == 0);

    /* The step's enrollment, and the same from the free functions. */
    const std::string &enrollment = *step.totp_link;
    pa::Outcome<std::optional<pa::Secret>> secret = step.totp_secret(std::nothrow);
    CHECK(secret.ok() && *secret && (*secret)->size() == 32);
    auto free_secret = pa::totp_secret(std::nothrow, enrollment);
    CHECK(free_secret.ok() && secret.ok() && *free_secret == *secret);
    auto png = step.qr_png(std::nothrow, 4);
    auto free_png = pa::totp_qr_png(std::nothrow, enrollment, 4);
    CHECK(png.ok() && png->size() > 8 && (*png)[1] == 'P' && free_png.ok() && *free_png == *png);
    auto matrix = step.qr_matrix(std::nothrow);
    auto free_matrix = pa::totp_qr_matrix(std::nothrow, enrollment);
    CHECK(matrix.ok() && matrix->side > 21 && free_matrix.ok() && free_matrix->bits == matrix->bits);
    auto svg = step.qr_svg(std::nothrow, 2);
    auto free_svg = pa::totp_qr_svg(std::nothrow, enrollment, 2);
    CHECK(svg.ok() && svg->find("<svg") != std::string::npos && free_svg.ok() && *free_svg == *svg);
    auto terminal = step.qr_terminal(std::nothrow, pa::TerminalColors::dark_on_light);
    auto free_terminal = pa::totp_qr_terminal(std::nothrow, enrollment, pa::TerminalColors::dark_on_light);
    CHECK(terminal.ok() && !terminal->empty() && free_terminal.ok() && *free_terminal == *terminal);

    CHECK(refused(client.verify_totp(std::nothrow, "123456", std::string("jwt\0", 4), never<pa::Result>()), "user_jwt"));
    CHECK(refused(client.verify_totp(std::nothrow, std::string("12\0", 3), step.user_jwt, never<pa::Result>()), "code"));
    auto unreadable = test::wait<pa::Result>(queued, [&](auto done) { return client.verify_totp(std::nothrow, "123456", "not-a-jwt", done); });
    CHECK(failure(unreadable, pa::Code::invalid_user_jwt));
    std::string code = secret.ok() && *secret ? test::totp_code(**secret) : "000000";
    auto verified = test::wait<pa::Result>(queued, [&](auto done) { return client.verify_totp(std::nothrow, code, step.user_jwt, done); });
    if (!verified.ok() || !std::holds_alternative<pa::Authenticated>(*verified)) test::give_up("the code was not accepted");
    pa::Session session = std::get<pa::Authenticated>(*verified).session;

    pa::Outcome<pa::Secret> token = session.token(std::nothrow);
    CHECK(token.ok() && token->rfind("cst_", 0) == 0);
    auto restored = test::wait<std::optional<pa::Session>>(queued, [&](auto done) { return client.restore_session(std::nothrow, done); });
    CHECK(restored.ok() && *restored && (*restored)->end_user_id() == session.end_user_id());
    CHECK(refused(session.invalidate(std::nothrow, nullptr), "done"));
    CHECK(test::wait<void>(queued, [&](auto done) { return session.invalidate(std::nothrow, done); }).ok());
    CHECK(failure(session.token(std::nothrow), pa::Code::session_invalidated));
    CHECK(test::wait<void>(queued, [&](auto done) { return client.clear_persisted_session(std::nothrow, done); }).ok());
    CHECK(refused(client.restore_session(std::nothrow, nullptr), "done") &&
          refused(client.clear_persisted_session(std::nothrow, nullptr), "done"));
}

/* The enrollment functions' errors: no enrollment link, a scale out of range, a NUL byte; a
   step without a link. */
void totp_errors() {
    const std::string not_enrollment = "https://example.com";
    CHECK(failure(pa::totp_qr_png(std::nothrow, not_enrollment), pa::Code::totp_qr_unavailable));
    CHECK(failure(pa::totp_qr_matrix(std::nothrow, not_enrollment), pa::Code::totp_qr_unavailable));
    CHECK(failure(pa::totp_qr_svg(std::nothrow, not_enrollment), pa::Code::totp_qr_unavailable));
    CHECK(failure(pa::totp_qr_terminal(std::nothrow, not_enrollment), pa::Code::totp_qr_unavailable));
    CHECK(failure(pa::totp_qr_png(std::nothrow, "otpauth://totp/Portal:a?secret=JBSWY3DPEHPK3PXP&issuer=Portal", 0),
                  pa::Code::totp_qr_unavailable));
    CHECK(refused(pa::totp_secret(std::nothrow, std::string("otpauth://\0", 11)), "otpauth_url"));
    auto none = pa::totp_secret(std::nothrow, "otpauth://totp/Portal:a?issuer=Portal");
    CHECK(none.ok() && !*none);

    const pa::TotpRequired linkless{"jwt", std::nullopt, ""};
    auto no_secret = linkless.totp_secret(std::nothrow);
    CHECK(no_secret.ok() && !*no_secret);
    CHECK(failure(linkless.qr_png(std::nothrow), pa::Code::totp_qr_unavailable));
    CHECK(failure(linkless.qr_matrix(std::nothrow), pa::Code::totp_qr_unavailable));
    CHECK(failure(linkless.qr_svg(std::nothrow), pa::Code::totp_qr_unavailable));
    CHECK(failure(linkless.qr_terminal(std::nothrow), pa::Code::totp_qr_unavailable));
}

/* Browser sign-in with openers that answer without throwing: no browser, a failure; the
   OAuth URLs; a magic-link sign-in that needs a loopback redirect. */
void browser_sign_in() {
    std::string redirect = "http://127.0.0.1:" + std::to_string(test::free_port()) + "/callback";
    std::string environment = "env-cppnx-browser-" + test::label;
    test::emulator("/_emulator/environments", "{\"id\":\"" + environment + "\",\"allowedMethods\":[\"GOOGLE\",\"APPLE\"],\"redirectUrls\":[\"" +
                                                  redirect + "\"],\"totpRequired\":false,\"accountAbstraction\":false,\"autoCreateWallet\":false}");
    pa::Options options = test::emulator_options(environment);
    options.redirect_url = redirect;
    pa::Client client = make(options);
    CHECK(client.set_prefers_ephemeral_web_browser_session(std::nothrow, true).ok() && client.prefers_ephemeral_web_browser_session());

    std::string unopened;
    bool ephemeral = false;
    CHECK(client.set_browser_opener(std::nothrow, [&](const std::string &url, bool private_window) {
                    unopened = url;
                    ephemeral = private_window;
                    return pa::opener_no_browser;
                }).ok());
    auto nowhere = test::wait<pa::Result>(false, [&](auto done) { return client.sign_in_with_google(std::nothrow, 0, done); });
    const pa::Error *error = failure(nowhere, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::no_browser && error->url() == std::optional<std::string>(unopened) && ephemeral);

    CHECK(client.set_browser_opener(std::nothrow, [](const std::string &, bool) { return 7; }).ok());
    auto broken = test::wait<pa::Result>(false, [&](auto done) { return client.sign_in_with_apple(std::nothrow, 0, done); });
    error = failure(broken, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::opener_failed);
    CHECK(client.set_browser_opener(std::nothrow, nullptr).ok());
    CHECK(refused(client.sign_in_with_google(std::nothrow, 0, nullptr), "done") &&
          refused(client.sign_in_with_apple(std::nothrow, 0, nullptr), "done"));

    auto google = test::wait<std::string>(false, [&](auto done) { return client.login_with_google(std::nothrow, done); });
    CHECK(google.ok() && google->find("/oauth/google/authorize?state=") != std::string::npos);
    pa::Client open = make(test::emulator_options("env-open"));
    auto apple = test::wait<std::string>(false, [&](auto done) { return open.login_with_apple(std::nothrow, done); });
    error = failure(apple, pa::Code::auth_method_unavailable);
    CHECK(error && error->method() == std::optional<std::string>("APPLE"));
    CHECK(refused(open.login_with_google(std::nothrow, nullptr), "done") && refused(open.login_with_apple(std::nothrow, nullptr), "done"));

    CHECK(refused(open.sign_in_with_magic_link(std::nothrow, std::string("a\0b", 3), 0, never<pa::Result>()), "email"));
    auto not_loopback = test::wait<pa::Result>(false, [&](auto done) {
        return open.sign_in_with_magic_link(std::nothrow, test::email("loopback"), 0, done);
    });
    error = failure(not_loopback, pa::Code::sign_in_unavailable);
    CHECK(error && error->reason() == pa::Reason::redirect_not_loopback);
}

/* A store of the host's that fails with fail(), as a store without exceptions does. */
struct FailingStore : pa::SessionStore {
    std::mutex lock;
    std::map<std::string, pa::Secret> values;
    std::atomic<bool> failing{false};
    std::atomic<int> sets{0};

    std::optional<std::string> get(const std::string &environment_id) override {
        if (failing) {
            fail();
            return std::string("what a failed get returns is ignored");
        }
        std::lock_guard<std::mutex> guard(lock);
        auto found = values.find(environment_id);
        return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
    }
    void set(const std::string &environment_id, const std::string &value) override {
        if (failing) return fail();
        std::lock_guard<std::mutex> guard(lock);
        sets++;
        values[environment_id] = value;
    }
    void remove(const std::string &environment_id) override {
        if (failing) return fail();
        std::lock_guard<std::mutex> guard(lock);
        values.erase(environment_id);
    }
};

void host_storage() {
    auto store = std::make_shared<FailingStore>();
    pa::Options options = test::emulator_options("env-open");
    options.storage = pa::Storage::host(store);
    pa::Client client = make(options);
    auto signed_in = test::wait<std::optional<pa::Result>>(false, [&](auto done) {
        return client.handle_redirect(std::nothrow, test::grant_redirect("env-open", test::email("host")), done);
    });
    CHECK(signed_in.ok() && *signed_in && std::holds_alternative<pa::Authenticated>(**signed_in) && store->sets == 1);

    store->failing = true;
    auto down = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return client.restore_session(std::nothrow, done); });
    const pa::Error *error = failure(down, pa::Code::session_storage_failure);
    CHECK(error && error->reason() == pa::Reason::host_storage_failed);
    auto not_cleared = test::wait<void>(false, [&](auto done) { return client.clear_persisted_session(std::nothrow, done); });
    error = failure(not_cleared, pa::Code::session_storage_failure);
    CHECK(error && error->reason() == pa::Reason::host_storage_failed);

    /* A failure is the call's alone: the next call of the store succeeds. */
    store->failing = false;
    auto restored = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return client.restore_session(std::nothrow, done); });
    CHECK(restored.ok() && *restored);
}

/* A dispatcher that hands each job to this thread; a component's own completion queue. */
void completion_models() {
    pa::Client client = make(test::emulator_options("env-open"));
    std::mutex lock;
    std::condition_variable posted;
    std::deque<pa::Job> jobs;
    CHECK(client.set_dispatcher(std::nothrow, [&](pa::Job job) {
                    std::lock_guard<std::mutex> guard(lock);
                    jobs.push_back(std::move(job));
                    posted.notify_one();
                }).ok());
    std::thread::id ran_on;
    auto dispatched = client.get_methods(std::nothrow, [&](pa::Outcome<pa::Methods> outcome) {
        CHECK(outcome.ok());
        ran_on = std::this_thread::get_id();
    });
    CHECK(dispatched.ok());
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!posted.wait_for(guard, std::chrono::seconds(30), [&] { return !jobs.empty(); })) test::give_up("nothing was dispatched");
    }
    jobs.front()();
    CHECK(ran_on == std::this_thread::get_id());
    CHECK(client.set_dispatcher(std::nothrow, nullptr).ok());

    pa::Outcome<pa::CompletionQueue> queue = pa::CompletionQueue::create();
    if (!queue) test::give_up("no completion queue");
    pa::Options options = test::emulator_options("env-open");
    options.completion_queue = &*queue;
    pa::Client component = make(options);
    std::optional<pa::Outcome<pa::Methods>> methods;
    CHECK(component.get_methods(std::nothrow, [&](pa::Outcome<pa::Methods> outcome) { methods = std::move(outcome); }).ok());
    CHECK(!methods);
    pollfd watched{queue->fd(), POLLIN, 0};
    while (!methods && poll(&watched, 1, 30000) == 1) queue->run();
    CHECK(methods && methods->ok());
}

/* Redirect forwarding: refusals, a forwarded magic link signing the listener in, listening
   ended by cancelling it. */
void forwarding() {
    pa::Options options = test::emulator_options("env-open");
    options.application_id = "io.portalhq.cppnx." + test::label;
    pa::Client client = make(options);
    std::mutex lock;
    std::condition_variable changed;
    std::deque<pa::Outcome<std::optional<pa::Result>>> handled;
    std::optional<pa::Outcome<void>> ended;
    auto each = [&](pa::Outcome<std::optional<pa::Result>> outcome) {
        std::lock_guard<std::mutex> guard(lock);
        handled.push_back(std::move(outcome));
        changed.notify_all();
    };
    auto end = [&](pa::Outcome<void> outcome) {
        std::lock_guard<std::mutex> guard(lock);
        ended = std::move(outcome);
        changed.notify_all();
    };
    CHECK(refused(client.listen_for_redirects(std::nothrow, nullptr, end), "each"));
    CHECK(refused(client.listen_for_redirects(std::nothrow, each, nullptr), "ended"));
    pa::Outcome<pa::Call> listening = client.listen_for_redirects(std::nothrow, each, end);
    CHECK(listening.ok());
    auto forward = [&](const std::string &url) {
        return test::wait<pa::ForwardResult>(false, [&](auto done) { return pa::forward_redirect(std::nothrow, options, url, done); });
    };
    CHECK(refused(pa::forward_redirect(std::nothrow, options, "myapp://auth/callback", nullptr), "done"));
    CHECK(refused(pa::forward_redirect(std::nothrow, options, std::string("myapp://\0", 9), never<pa::ForwardResult>()), "url"));

    CHECK(test::wait<void>(false, [&](auto done) { return client.send_magic_link(std::nothrow, test::email("forward"), done); }).ok());
    std::string link = test::json_string(test::emulator("/_emulator/outbox?email=" + test::query_email("forward")), "link");
    auto taken = forward(link);
    CHECK(taken.ok() && *taken == pa::ForwardResult::taken);
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!changed.wait_for(guard, std::chrono::seconds(30), [&] { return !handled.empty(); })) test::give_up("no forwarded redirect");
        CHECK(handled.front().ok() && *handled.front() && std::holds_alternative<pa::Authenticated>(**handled.front()));
    }
    auto other = forward("https://example.com/elsewhere?token=x");
    CHECK(other.ok() && *other == pa::ForwardResult::refused);
    if (listening) listening->cancel();
    {
        std::unique_lock<std::mutex> guard(lock);
        if (!changed.wait_for(guard, std::chrono::seconds(30), [&] { return ended.has_value(); })) test::give_up("listening did not end");
        CHECK(failure(*ended, pa::Code::sign_in_closed));
    }
    auto unclaimed = forward("myapp://auth/callback");
    CHECK(unclaimed.ok() && *unclaimed == pa::ForwardResult::no_instance);
}

/* Log handlers and the level, with their errors. */
void logging() {
    std::mutex lock;
    std::vector<std::thread::id> lines;
    auto collect = [&](pa::LogLevel level, std::string_view message) {
        test::audit(level, message);
        std::lock_guard<std::mutex> guard(lock);
        lines.push_back(std::this_thread::get_id());
    };
    auto count = [&] {
        std::lock_guard<std::mutex> guard(lock);
        return lines.size();
    };
    pa::Client client = make(test::emulator_options("env-open"));
    auto exchange = [&](bool queued) {
        auto result = test::wait<std::optional<pa::Result>>(queued, [&](auto done) {
            return client.handle_redirect(std::nothrow, test::grant_redirect("env-open", test::email("log")), done);
        });
        CHECK(result.ok() && *result);
    };
    CHECK(pa::set_log_handler(std::nothrow, collect).ok());
    exchange(false);
    CHECK(count() > 0);
    CHECK(failure(pa::set_log_level(std::nothrow, static_cast<pa::LogLevel>(42)), pa::Code::invalid_argument));
    CHECK(pa::set_log_level(std::nothrow, pa::LogLevel::none).ok());
    std::size_t before = count();
    exchange(false);
    CHECK(count() == before);
    CHECK(pa::set_log_level(std::nothrow, pa::LogLevel::debug).ok());

    CHECK(pa::set_queued_log_handler(std::nothrow, collect).ok() && client.set_completion_queue(std::nothrow, true).ok());
    {
        std::lock_guard<std::mutex> guard(lock);
        lines.clear();
    }
    exchange(true);
    pa::run_completions();
    {
        std::lock_guard<std::mutex> guard(lock);
        CHECK(!lines.empty() && std::all_of(lines.begin(), lines.end(), [](std::thread::id id) { return id == std::this_thread::get_id(); }));
    }
    CHECK(pa::set_log_handler(std::nothrow, test::audit).ok());
}

} // namespace

int main(int argc, char **argv) {
    return test::main_of(argc, argv, "no_exceptions_test", [] {
        outcomes();
        creating();
        magic_link_flow();
        totp_errors();
        browser_sign_in();
        host_storage();
        completion_models();
        forwarding();
        logging();
    });
}
