#include "Calls.h"

#include <PortalAuthQt/TotpStep.h>

#include <QCoreApplication>
#include <QDesktopServices>

#include <condition_variable>

namespace PortalAuthQt {

CallState::Ended CallState::end(void *user_data) {
    auto *state = static_cast<CallState *>(user_data);
    Ended ended{state->client, state->reply};
    if (state->client) state->client->calls_.remove(state);
    if (state->reply) state->reply->state_ = nullptr;
    portal_auth_call_free(state->call);
    delete state;
    return ended;
}

void CallState::onDone(void *user_data, const portal_auth_error *error) {
    const bool signsOut = static_cast<CallState *>(user_data)->signsOut;
    Ended ended = end(user_data);
    if (signsOut && !error && ended.client) ended.client->takeSession(nullptr);
    if (ended.reply) ended.reply->finish(error);
}

void CallState::onMethods(void *user_data, const portal_auth_methods *methods, const portal_auth_error *error) {
    Ended ended = end(user_data);
    auto *reply = static_cast<MethodsReply *>(ended.reply.data());
    if (!reply) return;
    if (methods) {
        for (size_t index = 0; index < portal_auth_methods_count(methods); index++) {
            reply->methods_.append(QString::fromUtf8(portal_auth_methods_at(methods, index)));
        }
        reply->autoCreateWallet_ = portal_auth_methods_auto_create_wallet(methods) == PORTAL_AUTH_TRUE;
    }
    reply->finish(error);
}

void CallState::onResult(void *user_data, const portal_auth_result *result, const portal_auth_error *error) {
    Ended ended = end(user_data);
    TotpStep *step = ended.client && result ? ended.client->take(result) : nullptr;
    auto *reply = static_cast<SignInReply *>(ended.reply.data());
    if (!reply) return;
    if (result) {
        reply->signedIn_ = portal_auth_result_kind(result) == PORTAL_AUTH_RESULT_AUTHENTICATED;
        reply->endUserId_ = QString::fromUtf8(reply->signedIn_ ? portal_auth_session_end_user_id(portal_auth_result_session(result))
                                                               : portal_auth_result_end_user_id(result));
        reply->totpStep_ = step;
    }
    reply->finish(error);
}

void CallState::onSession(void *user_data, portal_auth_session *session, const portal_auth_error *error) {
    Ended ended = end(user_data);
    if (ended.client && !error) ended.client->takeSession(session);
    auto *reply = static_cast<SignInReply *>(ended.reply.data());
    if (!reply) return;
    if (session) {
        reply->signedIn_ = true;
        reply->endUserId_ = QString::fromUtf8(portal_auth_session_end_user_id(session));
    }
    reply->finish(error);
}

void CallState::onRedirect(void *user_data, const portal_auth_result *result, const portal_auth_error *error,
                           portal_auth_bool last) {
    if (last == PORTAL_AUTH_TRUE) {
        Ended ended = end(user_data);
        if (ended.reply) ended.reply->finish(error);
        return;
    }
    Client *client = static_cast<CallState *>(user_data)->client;
    if (!client) return;
    if (result) {
        client->take(result);
    } else if (error) {
        const portal_auth_reason reason = portal_auth_error_reason(error);
        Q_EMIT client->redirectFailed(portal_auth_error_code(error),
                                      reason ? QString::fromUtf8(portal_auth_reason_user_message(reason)) : QString(),
                                      QString::fromUtf8(portal_auth_error_message(error)));
    }
}

namespace {

// The opener's answer, given once: by the posted call when it runs, or as "not opened" when
// the call is dropped unrun (its client destroyed first).
struct Answer {
    std::mutex lock;
    std::condition_variable changed;
    bool given = false;
    bool opened = false;
    bool ran = false;

    void give(bool ranIt, bool openedIt) {
        std::lock_guard<std::mutex> held(lock);
        if (given) return;
        given = true;
        ran = ranIt;
        opened = openedIt;
        changed.notify_all();
    }
};

// Held by the posted call alone: its destruction, run or not, settles the answer.
struct Responder {
    explicit Responder(std::shared_ptr<Answer> given) : answer(std::move(given)) {}
    Responder(const Responder &) = delete;
    Responder &operator=(const Responder &) = delete;
    ~Responder() { answer->give(false, false); }
    std::shared_ptr<Answer> answer;
};

}  // namespace

int OpenerLink::open(void *user_data, const char *url, portal_auth_bool ephemeral) {
    (void)ephemeral;  // QDesktopServices has no private window to ask for
    auto *link = static_cast<OpenerLink *>(user_data);
    const QUrl target = QUrl::fromEncoded(QByteArray(url));
    auto answer = std::make_shared<Answer>();
    {
        std::lock_guard<std::mutex> held(link->lock);
        // The application's opener runs in the client's thread; the default in the main
        // thread, where QDesktopServices belongs.
        QObject *context = link->opener ? static_cast<QObject *>(link->client) : QCoreApplication::instance();
        if (!link->client || !context) return link->client ? PORTAL_AUTH_REASON_NO_BROWSER : 1;
        auto responder = std::make_shared<Responder>(answer);
        QMetaObject::invokeMethod(
            context,
            [responder, opener = link->opener, target] {
                responder->answer->give(true, opener ? opener(target) : QDesktopServices::openUrl(target));
            },
            Qt::QueuedConnection);
    }
    std::unique_lock<std::mutex> held(answer->lock);
    answer->changed.wait(held, [&answer] { return answer->given; });
    if (!answer->ran) return 1;  // the client went first: its sign-in is ending anyway
    return answer->opened ? 0 : PORTAL_AUTH_REASON_NO_BROWSER;
}

}  // namespace PortalAuthQt
