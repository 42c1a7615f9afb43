/* sign-in: a terminal sign-in with portal_auth.hpp. By magic link (the email asked for, the
 * link pasted back), the TOTP step drawn as a QR code on a first sign-in, the session kept in
 * the desktop keyring; --restore prints the signed-in user (exit status 1: nobody), --sign-out
 * forgets them. Completions come through the completion queue, run by this thread while it
 * waits: a program without an event loop needs nothing more.
 *
 *   sign-in [--api-host URL] [--environment ID] [--redirect-url URL]
 *           [--from-email ADDRESS --template-id ID] [--restore | --sign-out] */
#include <portal_auth.hpp>

#include <poll.h>

#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

namespace pa = portal::auth;

namespace {

/* Starts a call with `start(done)` and runs the completion queue until it has completed. */
template <typename Value, typename Start>
pa::Outcome<Value> wait(Start start) {
    std::optional<pa::Outcome<Value>> outcome;
    pa::Call call = start([&outcome](pa::Outcome<Value> done) { outcome.emplace(std::move(done)); });
    pollfd watched{pa::completion_fd(), POLLIN, 0};
    while (!outcome && poll(&watched, 1, -1) == 1) pa::run_completions();
    if (!outcome) throw pa::Error(pa::Code::internal, "The completion queue could not be watched.");
    return std::move(*outcome);
}

std::string ask(const char *prompt) {
    std::string line;
    std::cout << prompt << std::flush;
    if (!std::getline(std::cin, line)) throw pa::Error(pa::Code::cancelled, "Standard input ended.");
    return line;
}

int usage() {
    std::cerr << "usage: sign-in [--api-host URL] [--environment ID] [--redirect-url URL]\n"
                 "               [--from-email ADDRESS --template-id ID] [--restore | --sign-out]\n";
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    pa::Options options;
    options.auth_environment_id = "env-demo";
    options.redirect_url = "myapp://auth/callback";
    std::string from_email, template_id, action = "sign-in";
    for (int i = 1; i < argc; i++) {
        std::string flag = argv[i];
        if (flag == "--restore" || flag == "--sign-out") { action = flag.substr(2); continue; }
        if (i + 1 == argc) return usage();
        std::string value = argv[++i];
        if (flag == "--api-host") options.api_host = value;
        else if (flag == "--environment") options.auth_environment_id = value;
        else if (flag == "--redirect-url") options.redirect_url = value;
        else if (flag == "--from-email") from_email = value;
        else if (flag == "--template-id") template_id = value;
        else return usage();
    }
    if (!from_email.empty() || !template_id.empty()) options.magic_link = pa::MagicLinkConfig{from_email, template_id};

    try {
        pa::Client client(options);
        client.set_completion_queue(true);
        std::optional<pa::Session> session =
            wait<std::optional<pa::Session>>([&](auto done) { return client.restore_session(done); }).value();
        if (action == "restore") {
            if (!session) { std::cout << "Not signed in.\n"; return 1; }
            std::cout << "Signed in as " << session->end_user_id() << ".\n";
            return 0;
        }
        if (action == "sign-out") {
            if (session) wait<void>([&](auto done) { return session->invalidate(done); }).value();
            std::cout << "Signed out.\n";
            return 0;
        }

        std::string email = ask("Email: ");
        wait<void>([&](auto done) { return client.send_magic_link(email, done); }).value();
        std::optional<pa::Result> result;
        while (!result) {
            std::string link = ask("Link from the email: ");
            result = wait<std::optional<pa::Result>>([&](auto done) { return client.handle_redirect(link, done); }).value();
            if (!result) std::cout << "That is not a sign-in link of this app.\n";
        }
        if (auto *step = std::get_if<pa::TotpRequired>(&*result)) {
            if (step->totp_link) {
                std::cout << "Scan this code with an authenticator app, or enter the secret "
                          << step->totp_secret().value_or("") << ":\n" << step->qr_terminal();
            }
            /* Asked again for a code that is not six digits, or that the server refused; any
               other error (an expired step) ends the program. The userJwt outlives the step,
               which result's next value replaces: a Secret, wiped when it goes. */
            const pa::Secret user_jwt = step->user_jwt;
            for (;;) {
                std::optional<std::string> code = pa::normalize_totp_code(ask("Code: "));
                if (!code) {
                    std::cout << "Type the six digits your authenticator app shows.\n";
                    continue;
                }
                pa::Outcome<pa::Result> verified =
                    wait<pa::Result>([&](auto done) { return client.verify_totp(*code, user_jwt, done); });
                const pa::Error *refused = verified.error();
                if (refused && refused->reason() == pa::Reason::totp_code_rejected) {
                    std::cout << pa::reason_user_message(refused->reason()).value_or("Wrong code.") << "\n";
                    continue;
                }
                result = std::move(verified).value();
                break;
            }
        }
        std::cout << "Signed in as " << std::get<pa::Authenticated>(*result).session.end_user_id() << ".\n";
        return 0;
    } catch (const pa::Error &error) {
        /* The sentence for the user when the reason has one; the developer's message too. */
        if (std::optional<std::string_view> sentence = pa::reason_user_message(error.reason())) std::cerr << *sentence << "\n";
        std::cerr << error.what() << "\n";
        return 3;
    }
}
