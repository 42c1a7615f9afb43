/* The C++ layer's copies of secrets are wiped before their memory is freed. This program
 * replaces operator new and delete: every block is zeroed when allocated (so that what it
 * holds was written by C++), and, while recording, copied aside when freed. A sign-in against
 * the Portal emulator (PORTAL_AUTH_TEST_API_HOST) with a host session store is then searched
 * for: the TotpRequired's user_jwt and totp_link, the enrollment secret, the Client Session
 * Token (from Session::token() and inside the store's values, which pass through the layer
 * both ways) and a typed TOTP code; none may be in a freed block. A plain std::string, freed
 * the same way, is found: the search can fail. Secret's own rules are checked as well: the
 * buffer given up by an assignment, and the bytes a move leaves in a short string. Built
 * with -O2, where the compiler drops the stores it may. The first argument names the run. */
#include "support.hpp"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string_view>

namespace recorder {

/* The blocks freed while recording, copied with malloc (which is not recorded). */
struct Freed {
    unsigned char *bytes;
    std::size_t size;
};
std::mutex lock;
std::atomic<bool> recording{false};
Freed *freed = nullptr;
std::size_t count = 0, capacity = 0;

/* Each block starts with its size, in a header that keeps the alignment new promises. */
constexpr std::size_t header = alignof(std::max_align_t);

void keep(const unsigned char *block, std::size_t size) {
    std::lock_guard<std::mutex> guard(lock);
    if (count == capacity) {
        capacity = capacity ? capacity * 2 : 4096;
        freed = static_cast<Freed *>(std::realloc(freed, capacity * sizeof(Freed)));
        if (!freed) std::abort();
    }
    auto *copy = static_cast<unsigned char *>(std::malloc(size ? size : 1));
    if (!copy) std::abort();
    std::memcpy(copy, block, size);
    freed[count++] = Freed{copy, size};
}

/* Whether a block freed while recording held text. */
bool found(std::string_view text) {
    std::lock_guard<std::mutex> guard(lock);
    for (std::size_t i = 0; i < count; i++)
        if (memmem(freed[i].bytes, freed[i].size, text.data(), text.size())) return true;
    return false;
}

} // namespace recorder

void *operator new(std::size_t size) {
    auto *block = static_cast<unsigned char *>(std::calloc(1, size + recorder::header));
    if (!block) throw std::bad_alloc();
    std::memcpy(block, &size, sizeof size);
    return block + recorder::header;
}

void operator delete(void *pointer) noexcept {
    if (!pointer) return;
    unsigned char *block = static_cast<unsigned char *>(pointer) - recorder::header;
    std::size_t size;
    std::memcpy(&size, block, sizeof size);
    if (recorder::recording) recorder::keep(block + recorder::header, size);
    std::free(block);
}

void operator delete(void *pointer, std::size_t) noexcept { operator delete(pointer); }

namespace {

/* A secret learnt during the sign-in, kept outside the recorded heap. */
struct Kept {
    char text[4096] = {};
    std::size_t size = 0;

    void keep(const std::string &secret) {
        if (secret.size() > sizeof text) test::give_up("a secret longer than expected");
        std::memcpy(text, secret.data(), secret.size());
        size = secret.size();
    }
    std::string_view view() const { return std::string_view(text, size); }
};

/* A host store that keeps its values as Secrets; it says when the library let it go. */
struct SecretStore : pa::SessionStore {
    std::mutex lock;
    std::map<std::string, pa::Secret> values;
    std::promise<void> destroyed;

    ~SecretStore() override { destroyed.set_value(); }
    std::optional<std::string> get(const std::string &environment_id) override {
        std::lock_guard<std::mutex> guard(lock);
        auto found = values.find(environment_id);
        return found == values.end() ? std::nullopt : std::optional<std::string>(found->second);
    }
    void set(const std::string &environment_id, const std::string &value) override {
        std::lock_guard<std::mutex> guard(lock);
        values[environment_id] = value;
    }
    void remove(const std::string &environment_id) override {
        std::lock_guard<std::mutex> guard(lock);
        values.erase(environment_id);
    }
};

/* Whether the storage of an object holds text, read as memory: the barrier keeps the
   compiler from assuming what the storage of an object that is gone holds. */
template <std::size_t size>
bool holds(unsigned char (&storage)[size], std::string_view text) {
    unsigned char *volatile memory = storage;
    __asm__ __volatile__("" : : "r"(memory) : "memory");
    return memmem(memory, size, text.data(), text.size()) != nullptr;
}

/* Secret's rules, each beside what a std::string leaves: the buffer an assignment of a longer
   value frees, and the bytes a move leaves inside a short string's object. */
void secret_rules() {
    const std::string_view first = "first-secret-value-in-a-heap-buffer", longer = "a-longer-secret-value-that-needs-a-new-buffer",
                           plain = "a-plain-string-value-in-a-heap-buffer";
    recorder::recording = true;
    {
        pa::Secret assigned(first);
        const pa::Secret replacement(longer);
        assigned = replacement;
        std::string control(plain);
    }
    recorder::recording = false;
    CHECK(recorder::found(plain));
    CHECK(!recorder::found(first) && !recorder::found(longer));

    /* A short value lives inside the object: what a move leaves there, once the object is
       gone. */
    const std::string_view tail = "hort-key";
    alignas(std::string) unsigned char control_object[sizeof(std::string)];
    auto *control = new (control_object) std::string("short-key");
    std::string control_taken(std::move(*control));
    control->~basic_string();
    CHECK(holds(control_object, tail));
    alignas(pa::Secret) unsigned char secret_object[sizeof(pa::Secret)];
    auto *secret = new (secret_object) pa::Secret("short-key");
    pa::Secret secret_taken(std::move(*secret));
    secret->~Secret();
    CHECK(!holds(secret_object, tail));
    /* A Secret that takes a std::string wipes what it leaves behind. */
    auto *source = new (control_object) std::string("short-key");
    pa::Secret took(std::move(*source));
    CHECK(!holds(control_object, tail) && took == "short-key");
    source->~basic_string();
}

/* A sign-in with TOTP enrollment, its restore from a second client and sign-out, recorded. */
void sign_in() {
    Kept user_jwt, totp_link, totp_secret, token, control;
    const std::string_view typed = "   9 8 7 - - 6 5 4   "; /* longer than a short string's */
    auto store = std::make_shared<SecretStore>();
    std::future<void> store_gone = store->destroyed.get_future();
    pa::Options options = test::emulator_options("env-demo");
    options.storage = pa::Storage::host(store);
    store.reset();

    recorder::recording = true;
    {
        pa::Client client(options);
        CHECK(test::wait<void>(false, [&](auto done) { return client.send_magic_link(test::email("wipe"), done); }).ok());
        std::string link = test::json_string(test::emulator("/_emulator/outbox?email=" + test::query_email("wipe")), "link");
        auto redirected = test::wait<std::optional<pa::Result>>(false, [&](auto done) { return client.handle_redirect(link, done); });
        if (!redirected.ok() || !*redirected || !std::holds_alternative<pa::TotpRequired>(**redirected)) test::give_up("no TOTP step");
        pa::TotpRequired step = std::get<pa::TotpRequired>(**std::move(redirected));
        if (!step.totp_link) test::give_up("no enrollment link");
        user_jwt.keep(step.user_jwt);
        totp_link.keep(*step.totp_link);
        std::optional<pa::Secret> secret = step.totp_secret();
        if (!secret) test::give_up("no enrollment secret");
        totp_secret.keep(*secret);
        CHECK(!step.qr_png(2).empty() && !step.qr_svg(2).empty() && !step.qr_terminal().empty() && step.qr_matrix().side > 0);

        auto verified = test::wait<pa::Result>(false, [&](auto done) { return client.verify_totp(test::totp_code(*secret), step.user_jwt, done); });
        if (!verified.ok() || !std::holds_alternative<pa::Authenticated>(*verified)) test::give_up("the code was not accepted");
        pa::Session session = std::get<pa::Authenticated>(*std::move(verified)).session;
        token.keep(session.token());

        pa::Client second(options);
        auto restored = test::wait<std::optional<pa::Session>>(false, [&](auto done) { return second.restore_session(done); });
        CHECK(restored.ok() && *restored && (*restored)->token() == token.view());
        CHECK(test::wait<void>(false, [&](auto done) { return session.invalidate(done); }).ok());
        CHECK(pa::normalize_totp_code(typed) == std::optional<std::string>("987654"));

        /* The control: a std::string holding secret-like text (the userJwt backwards). */
        std::string plain(user_jwt.view().rbegin(), user_jwt.view().rend());
        control.keep(plain);
    }
    options.storage = pa::Storage::memory();
    CHECK(store_gone.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    recorder::recording = false;

    CHECK(recorder::found(control.view()));
    CHECK(!recorder::found(user_jwt.view()));
    CHECK(!recorder::found(totp_link.view()));
    CHECK(!recorder::found(totp_secret.view()));
    CHECK(!recorder::found(token.view()));
    CHECK(!recorder::found(typed));
}

} // namespace

int main(int argc, char **argv) {
    return test::main_of(argc, argv, "wipe_test", [] {
        secret_rules();
        sign_in();
    });
}
