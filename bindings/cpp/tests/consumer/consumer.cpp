/* The program of the C++ consumer project: Tests/consumers/consumer.c's checks through
 * portal_auth.hpp's std::nothrow forms. It checks that the header and the library it loads
 * agree on the version, makes a client, and reads the error of a blank redirect URL. Prints
 * "consumer: <version>" and exits 0. */
#include <portal_auth.hpp>

#include <cstdio>

static_assert(__cplusplus >= 201703L, "PortalAuth::PortalAuthCpp carries C++17");
static_assert(!PORTAL_AUTH_HPP_EXCEPTIONS, "built without exceptions");

namespace pa = portal::auth;

int main() {
    if (pa::version_number() != PORTAL_AUTH_VERSION_NUMBER || pa::version() != PORTAL_AUTH_VERSION_STRING) {
        std::fprintf(stderr, "consumer: built against %s, loaded %s\n", PORTAL_AUTH_VERSION_STRING, pa::version().c_str());
        return 1;
    }
    pa::Options options;
    options.auth_environment_id = "env-consumer";
    options.redirect_url = "myapp://auth/callback";
    options.storage = pa::Storage::memory();
    if (pa::Outcome<pa::Client> client = pa::Client::create(options); !client) {
        std::fprintf(stderr, "consumer: %s\n", client.error()->what());
        return 1;
    }
    options.redirect_url = " ";
    pa::Outcome<pa::Client> refused = pa::Client::create(options);
    if (!refused.error() || refused.error()->name() != std::optional<std::string>("redirect_url")) {
        std::fprintf(stderr, "consumer: a blank redirect URL was not refused\n");
        return 1;
    }
    std::printf("consumer: %s\n", pa::version().c_str());
    return 0;
}
