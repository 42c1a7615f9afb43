/* What the C++ tests share: checks and their count, the run's label and its emails, waiting
 * for a completion in each model, requests to the Portal emulator's control endpoints
 * (libcurl) and the free loopback ports they hand out, a TOTP code computed from an
 * enrollment secret as an authenticator app does (RFC 6238 with OpenSSL's HMAC-SHA1), and the
 * log audit's file. Built with and without exceptions. */
#ifndef PORTAL_AUTH_CPP_TEST_SUPPORT_HPP
#define PORTAL_AUTH_CPP_TEST_SUPPORT_HPP

#include <portal_auth.hpp>

#include <curl/curl.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace pa = portal::auth;

namespace test {

inline int passed, failed;

#define CHECK(condition)                                                                     \
    do {                                                                                     \
        if (condition) {                                                                     \
            test::passed++;                                                                  \
        } else {                                                                             \
            test::failed++;                                                                  \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
        }                                                                                    \
    } while (0)

/* Stops the test: a completion that never comes would otherwise hang it. */
[[noreturn]] inline void give_up(const char *what) {
    std::fprintf(stderr, "giving up: %s\n", what);
    std::abort();
}

/* The first argument of the test: it names the run (its emails, its environments), so that
   builds by two compilers share one emulator. */
inline std::string label;

inline std::string email(const std::string &what) { return "cpp-" + what + "-" + label + "@example.com"; }

/* The same, percent-encoded for a query. */
inline std::string query_email(const std::string &what) { return "cpp-" + what + "-" + label + "%40example.com"; }

/* The outcome's error, when it has the code. */
template <typename Value>
const pa::Error *failure(const pa::Outcome<Value> &outcome, pa::Code code) {
    const pa::Error *error = outcome.error();
    return error && error->code() == code ? error : nullptr;
}

/* Whether a call started: a Call did; a std::nothrow form's outcome unless it is an error. */
inline bool started(const pa::Call &) { return true; }
template <typename Value>
bool started(const pa::Outcome<Value> &outcome) {
    return outcome.ok();
}

/* The completion of the call `start(done)` starts, waited for: from the completion queue
   (run on this thread whenever its descriptor is readable), or else however the client's model
   delivers it. `ran_inside` tells whether the completion ran inside the starting call. */
template <typename Value, typename Start>
pa::Outcome<Value> wait(bool queued, Start start, bool *ran_inside = nullptr) {
    auto promise = std::make_shared<std::promise<pa::Outcome<Value>>>();
    std::future<pa::Outcome<Value>> future = promise->get_future();
    auto call = start(pa::Done<Value>([promise](pa::Outcome<Value> outcome) { promise->set_value(std::move(outcome)); }));
    if (!started(call)) give_up("the library refused to start the call");
    bool ready = future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    if (ran_inside) *ran_inside = ready && queued;
    if (queued) {
        pollfd watched{pa::completion_fd(), POLLIN, 0};
        while (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            if (poll(&watched, 1, 30000) != 1) give_up("the completion queue stayed empty for 30 s");
            pa::run_completions();
        }
    } else if (future.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
        give_up("no completion in 30 s");
    }
    return future.get();
}

/* GET (body empty) or another method on the emulator in PORTAL_AUTH_TEST_API_HOST: the answer. */
inline std::string emulator(const std::string &path, const std::string &body = "", const char *method = nullptr) {
    std::string url = std::string(std::getenv("PORTAL_AUTH_TEST_API_HOST")) + path, answer;
    std::unique_ptr<CURL, void (*)(CURL *)> easy(curl_easy_init(), curl_easy_cleanup);
    std::unique_ptr<curl_slist, void (*)(curl_slist *)> headers(
        curl_slist_append(nullptr, "Content-Type: application/json"), curl_slist_free_all);
    curl_write_callback append = [](char *data, size_t size, size_t count, void *into) {
        static_cast<std::string *>(into)->append(data, size * count);
        return size * count;
    };
    curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());
    if (!body.empty()) curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, body.c_str());
    if (method) curl_easy_setopt(easy.get(), CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &answer);
    if (curl_easy_perform(easy.get()) != CURLE_OK) give_up("the emulator did not answer");
    return answer;
}

/* The last "key":"value" of the emulator's compact JSON (its values hold no quotes). */
inline std::string json_string(const std::string &json, const std::string &key) {
    std::string pattern = "\"" + key + "\":\"";
    std::size_t at = json.rfind(pattern);
    if (at == std::string::npos) return "";
    at += pattern.size();
    return json.substr(at, json.find('"', at) - at);
}

/* A magic-link redirect URL carrying a fresh grant of `environment` made at the emulator. */
inline std::string grant_redirect(const std::string &environment, const std::string &email) {
    std::string answer = emulator("/_emulator/grants", "{\"environmentId\":\"" + environment + "\",\"email\":\"" + email +
                                                           "\",\"kind\":\"magic\"}");
    std::string token = json_string(answer, "token");
    if (token.empty()) give_up("the emulator made no grant");
    return "myapp://auth/callback?token=" + token + "&authMethod=EMAIL_MAGIC_LINK";
}

/* Options of a client of `environment` at the emulator, with magic links, keeping its
   session in memory. */
inline pa::Options emulator_options(const std::string &environment) {
    pa::Options options;
    options.auth_environment_id = environment;
    options.redirect_url = "myapp://auth/callback";
    options.api_host = std::getenv("PORTAL_AUTH_TEST_API_HOST");
    options.magic_link = pa::MagicLinkConfig{"hello@auth.example.com", "tmpl"};
    options.storage = pa::Storage::memory();
    return options;
}

/* A loopback port nobody listens on now, for the test's own listener: the emulator hands it
   out (emulator/README.md, `GET loopback-port`). */
inline int free_port() {
    int port = 0;
    if (std::sscanf(emulator("/_emulator/loopback-port").c_str(), "{\"port\":%d}", &port) != 1 || port <= 0)
        give_up("the emulator handed out no loopback port");
    return port;
}

/* The code an authenticator app shows now for a base32 secret (RFC 6238: HMAC-SHA1, 30 s, 6
   digits). */
inline std::string totp_code(const std::string &base32) {
    std::string key;
    unsigned buffer = 0;
    int bits = 0;
    for (char c : base32) {
        int value = c >= 'A' && c <= 'Z' ? c - 'A' : c >= '2' && c <= '7' ? c - '2' + 26 : -1;
        if (value < 0) give_up("the secret is not base32");
        buffer = (buffer << 5) | static_cast<unsigned>(value);
        bits += 5;
        if (bits >= 8) {
            bits -= 8;
            key.push_back(static_cast<char>((buffer >> bits) & 0xff));
        }
    }
    unsigned char counter[8];
    auto step = static_cast<unsigned long long>(std::time(nullptr) / 30);
    for (int i = 7; i >= 0; i--, step >>= 8) counter[i] = static_cast<unsigned char>(step & 0xff);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), counter, sizeof counter, mac, &length))
        give_up("HMAC failed");
    unsigned offset = mac[length - 1] & 0x0f;
    unsigned long value = (static_cast<unsigned long>(mac[offset] & 0x7f) << 24) | (static_cast<unsigned long>(mac[offset + 1]) << 16) |
                          (static_cast<unsigned long>(mac[offset + 2]) << 8) | mac[offset + 3];
    char code[8];
    std::snprintf(code, sizeof code, "%06lu", value % 1000000);
    return code;
}

/* The log audit: with PORTAL_AUTH_TEST_LOG_FILE set, every line the library logs goes there as
   `cpp<TAB>level<TAB>message`, one write each (scripts/log-audit.py checks them for secrets). */
inline void audit(pa::LogLevel level, std::string_view message) {
    static int fd = [] {
        const char *path = std::getenv("PORTAL_AUTH_TEST_LOG_FILE");
        return path ? open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600) : -1;
    }();
    if (fd < 0) return;
    std::string line = "cpp\t" + std::to_string(static_cast<int>(level)) + "\t" + std::string(message) + "\n";
    if (write(fd, line.data(), line.size()) < 0) { /* the audit then finds the line missing */ }
}

inline int report(const char *name) {
    std::printf("%s: %d passed, %d failed\n", name, passed, failed);
    return failed == 0 ? 0 : 1;
}

/* A test program's main: with the emulator's URL and the run's label (its first argument),
   runs the tests with libcurl ready and the log audit as the log handler, and reports. */
template <typename Tests>
int main_of(int argc, char **argv, const char *name, Tests tests) {
    if (!std::getenv("PORTAL_AUTH_TEST_API_HOST") || argc < 2) return 2;
    label = argv[1];
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (!pa::set_log_handler(std::nothrow, audit)) give_up("the log handler was refused");
    tests();
    if (!pa::set_log_handler(std::nothrow, nullptr)) give_up("the log handler stayed");
    curl_global_cleanup();
    return report(name);
}

} // namespace test

#endif
