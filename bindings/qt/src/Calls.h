// What this layer keeps for a call in flight, and the C callbacks that end it. Private.
#pragma once

#include <PortalAuthQt/Client.h>

#include <QPointer>

#include <memory>
#include <mutex>

#include <portal_auth.h>

namespace PortalAuthQt {

// The user_data of one C call. Its completion runs in the client's thread while the client
// lives (its queue's runs); once the client is gone, on a library thread, detached from
// both client and reply, so that it touches nothing but itself then.
struct CallState {
    CallState(Client *owner, Reply *replyTo) : client(owner), reply(replyTo) {}

    Client *client;
    Reply *reply;
    portal_auth_call *call = nullptr;
    // Browser and magic-link sign-ins: the opener's link lives until they call back.
    std::shared_ptr<OpenerLink> opener;
    // signOut(): the client lets go of its session on success.
    bool signsOut = false;

    static void onDone(void *user_data, const portal_auth_error *error);
    static void onMethods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error);
    static void onResult(void *user_data, const portal_auth_result *result, const portal_auth_error *error);
    static void onSession(void *user_data, portal_auth_session *session, const portal_auth_error *error);
    static void onRedirect(void *user_data, const portal_auth_result *result, const portal_auth_error *error,
                           portal_auth_bool last);

private:
    struct Ended {
        QPointer<Client> client;
        QPointer<Reply> reply;
    };
    // Detaches the state from its client and reply, frees it, and gives them back (guarded:
    // a signal the completion emits may delete either).
    static Ended end(void *user_data);
};

// The browser opener's user_data: the client to open through, while it lives, and the
// application's opener if it set one (fixed: setOpener makes a new link).
struct OpenerLink {
    std::mutex lock;
    Client *client;
    Opener opener;

    // The C opener: asks the client's thread (the application's opener) or the main thread
    // (QDesktopServices) and waits for the answer.
    static int open(void *user_data, const char *url, portal_auth_bool ephemeral);
};

// portal_auth_options over Qt strings: the UTF-8 copies live as long as this.
class NativeOptions {
public:
    explicit NativeOptions(const Options &options);
    const portal_auth_options *get() const { return &options_; }
    // The option holding a NUL character, which C would cut short; empty when none.
    QString refusedField() const { return refused_; }

private:
    const char *keep(QByteArray &slot, const QString &text, const char *field, bool nullWhenEmpty);
    QByteArray strings_[8];
    portal_auth_options options_;
    QString refused_;
};

}  // namespace PortalAuthQt
