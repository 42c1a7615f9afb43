#include "Calls.h"

#include <PortalAuthQt/TotpStep.h>

#include <QGuiApplication>
#include <QSocketNotifier>

#include <condition_variable>

namespace PortalAuthQt {

namespace {

// A QString for C: UTF-8, or nothing when it holds a NUL character, which C would cut short.
bool utf8(const QString &text, QByteArray *out) {
    if (text.contains(QChar(u'\0'))) return false;
    *out = text.toUtf8();
    return true;
}

QString nulMessage(const char *field) {
    return QStringLiteral("Invalid argument: %1 contains a NUL character.").arg(QLatin1String(field));
}

}  // namespace

NativeOptions::NativeOptions(const Options &options) {
    portal_auth_options_init(&options_, sizeof options_);
    QString applicationId = options.applicationId.isEmpty() ? QGuiApplication::desktopFileName() : options.applicationId;
    options_.auth_environment_id = keep(strings_[0], options.authEnvironmentId, "authEnvironmentId", false);
    options_.redirect_url = keep(strings_[1], options.redirectUrl, "redirectUrl", false);
    options_.api_host = keep(strings_[2], options.apiHost, "apiHost", true);
    options_.magic_link_from_email = keep(strings_[3], options.magicLinkFromEmail, "magicLinkFromEmail", true);
    options_.magic_link_template_id = keep(strings_[4], options.magicLinkTemplateId, "magicLinkTemplateId", true);
    options_.application_id = keep(strings_[5], applicationId, "applicationId", true);
    options_.file_storage_path = keep(strings_[6], options.fileStoragePath, "fileStoragePath", true);
    options_.ca_file = keep(strings_[7], options.caFile, "caFile", true);
    switch (options.storage) {
    case Storage::Keyring: options_.storage = PORTAL_AUTH_STORAGE_KEYRING; break;
    case Storage::Memory: options_.storage = PORTAL_AUTH_STORAGE_MEMORY; break;
    case Storage::File: options_.storage = PORTAL_AUTH_STORAGE_FILE; break;
    }
    options_.connect_timeout_ms = options.connectTimeoutMs;
    options_.request_timeout_ms = options.requestTimeoutMs;
    options_.keyring_prompt_timeout_ms = options.keyringPromptTimeoutMs;
}

const char *NativeOptions::keep(QByteArray &slot, const QString &text, const char *field, bool nullWhenEmpty) {
    if (!utf8(text, &slot) && refused_.isEmpty()) refused_ = QLatin1String(field);
    return nullWhenEmpty && slot.isEmpty() ? nullptr : slot.constData();
}

Client::Client(const Options &options, QObject *parent) : QObject(parent) {
    NativeOptions native(options);
    if (!native.refusedField().isEmpty()) {
        error_ = PORTAL_AUTH_E_INVALID_ARGUMENT;
        errorString_ = nulMessage(native.refusedField().toLatin1().constData());
        return;
    }
    portal_auth_code made = portal_auth_completion_queue_new(&queue_);
    if (made == PORTAL_AUTH_OK) {
        portal_auth_options withQueue = *native.get();
        withQueue.completion_queue = queue_;
        portal_auth_error *failure = nullptr;
        made = portal_auth_new(&withQueue, &native_, &failure);
        if (failure) {
            errorString_ = QString::fromUtf8(portal_auth_error_message(failure));
            portal_auth_error_free(failure);
        }
    } else {
        errorString_ = QString::fromUtf8(portal_auth_code_message(made));
    }
    error_ = made;
    if (!native_) return;
    // Level-triggered: readable while the queue has work, so one run per activation.
    notifier_ = new QSocketNotifier(portal_auth_completion_queue_fd(queue_), QSocketNotifier::Read, this);
    connect(notifier_, &QSocketNotifier::activated, this, [this] { portal_auth_completion_queue_run(queue_); });
    setOpener(nullptr);
}

// A link whose client is gone opens nothing.
static void unlink(const std::shared_ptr<OpenerLink> &link) {
    if (!link) return;
    std::lock_guard<std::mutex> held(link->lock);
    link->client = nullptr;
}

Client::~Client() {
    unlink(opener_);
    // Detached first: what completes from here on completes on a library thread, touching
    // nothing of this client or its replies.
    for (CallState *state : std::as_const(calls_)) {
        unlink(state->opener);
        if (state->reply) state->reply->state_ = nullptr;
        state->client = nullptr;
        state->reply = nullptr;
        portal_auth_call_cancel(state->call);
    }
    calls_.clear();
    portal_auth_free(native_);
    delete notifier_;
    portal_auth_completion_queue_free(queue_);
    portal_auth_session_release(session_);
}

bool Client::isValid() const { return native_ != nullptr; }
portal_auth_code Client::error() const { return error_; }
QString Client::errorString() const { return errorString_; }
bool Client::isSignedIn() const { return session_ != nullptr; }
QString Client::endUserId() const { return endUserId_; }

void Client::setOpener(Opener opener) {
    if (!native_) return;
    // A link of its own for each opener: a sign-in calls the one installed when it was
    // called, and keeps its link (which the library calls) until it calls back.
    auto link = std::make_shared<OpenerLink>();
    link->client = this;
    link->opener = std::move(opener);
    portal_auth_set_browser_opener(native_, &OpenerLink::open, link.get());
    opener_ = std::move(link);
}

template <typename R, typename Start>
R *Client::begin(Start start, bool opens) {
    auto *reply = new R(this);
    if (!native_) {
        reply->finishLater(error_, errorString_);
        return reply;
    }
    auto *state = new CallState(this, reply);
    if (opens) state->opener = opener_;
    portal_auth_code started = start(state, &state->call);
    if (started != PORTAL_AUTH_OK) {
        delete state;
        reply->finishLater(started, QString::fromUtf8(portal_auth_code_message(started)));
        return reply;
    }
    reply->state_ = state;
    calls_.insert(state);
    return reply;
}

template <typename R>
R *Client::refusedNul(const char *field) {
    auto *reply = new R(this);
    reply->finishLater(PORTAL_AUTH_E_INVALID_ARGUMENT, nulMessage(field));
    return reply;
}

MethodsReply *Client::getMethods() {
    return begin<MethodsReply>([this](CallState *state, portal_auth_call **call) {
        return portal_auth_get_methods(native_, &CallState::onMethods, state, call);
    });
}

SignInReply *Client::restoreSession() {
    return begin<SignInReply>([this](CallState *state, portal_auth_call **call) {
        return portal_auth_restore_session(native_, &CallState::onSession, state, call);
    });
}

Reply *Client::sendMagicLink(const QString &email) {
    QByteArray address;
    if (!utf8(email, &address)) return refusedNul<Reply>("email");
    return begin<Reply>([this, address](CallState *state, portal_auth_call **call) {
        return portal_auth_send_magic_link(native_, address.constData(), &CallState::onDone, state, call);
    });
}

SignInReply *Client::signInWithMagicLink(const QString &email, int timeoutMs) {
    QByteArray address;
    if (!utf8(email, &address)) return refusedNul<SignInReply>("email");
    return begin<SignInReply>(
        [this, address, timeoutMs](CallState *state, portal_auth_call **call) {
            return portal_auth_sign_in_with_magic_link(native_, address.constData(), timeoutMs, &CallState::onResult, state, call);
        },
        true);
}

SignInReply *Client::signInWithGoogle(int timeoutMs) {
    return begin<SignInReply>(
        [this, timeoutMs](CallState *state, portal_auth_call **call) {
            return portal_auth_sign_in_with_google(native_, timeoutMs, &CallState::onResult, state, call);
        },
        true);
}

SignInReply *Client::signInWithApple(int timeoutMs) {
    return begin<SignInReply>(
        [this, timeoutMs](CallState *state, portal_auth_call **call) {
            return portal_auth_sign_in_with_apple(native_, timeoutMs, &CallState::onResult, state, call);
        },
        true);
}

SignInReply *Client::handleRedirect(const QUrl &url) {
    const QByteArray encoded = url.toEncoded();
    return begin<SignInReply>([this, encoded](CallState *state, portal_auth_call **call) {
        return portal_auth_handle_redirect(native_, encoded.constData(), &CallState::onResult, state, call);
    });
}

SignInReply *Client::verifyTotp(const QByteArray &code, const QByteArray &userJwt) {
    return begin<SignInReply>([this, &code, &userJwt](CallState *state, portal_auth_call **call) {
        return portal_auth_verify_totp(native_, code.constData(), userJwt.constData(), &CallState::onResult, state, call);
    });
}

Reply *Client::signOut() {
    return begin<Reply>([this](CallState *state, portal_auth_call **call) {
        state->signsOut = true;
        return portal_auth_clear_persisted_session(native_, &CallState::onDone, state, call);
    });
}

Reply *Client::listenForRedirects() {
    return begin<Reply>([this](CallState *state, portal_auth_call **call) {
        return portal_auth_listen_for_redirects(native_, &CallState::onRedirect, state, call);
    });
}

TotpStep *Client::take(const portal_auth_result *result) {
    switch (portal_auth_result_kind(result)) {
    case PORTAL_AUTH_RESULT_AUTHENTICATED:
        takeSession(portal_auth_result_session(result));
        return nullptr;
    case PORTAL_AUTH_RESULT_TOTP_REQUIRED: {
        auto *step = new TotpStep(this, portal_auth_result_user_jwt(result), portal_auth_result_end_user_id(result),
                                  portal_auth_result_totp_link(result), portal_auth_result_totp_expires_at(result));
        QPointer<TotpStep> guard(step);
        Q_EMIT totpRequired(step);
        return guard.data();
    }
    }
    return nullptr;
}

void Client::takeSession(portal_auth_session *session) {
    if (session == session_) return;
    portal_auth_session *previous = session_;
    session_ = session ? portal_auth_session_retain(session) : nullptr;
    portal_auth_session_release(previous);
    endUserId_ = session_ ? QString::fromUtf8(portal_auth_session_end_user_id(session_)) : QString();
    Q_EMIT sessionChanged();
}

namespace {

struct ForwardWait {
    std::mutex lock;
    std::condition_variable changed;
    bool done = false;
    ForwardResult result = ForwardResult::Failed;
    QString message;
};

void onForwarded(void *user_data, portal_auth_forward_result outcome, const portal_auth_error *error) {
    auto *wait = static_cast<ForwardWait *>(user_data);
    std::lock_guard<std::mutex> held(wait->lock);
    switch (outcome) {
    case PORTAL_AUTH_FORWARD_TAKEN: wait->result = ForwardResult::Taken; break;
    case PORTAL_AUTH_FORWARD_NO_INSTANCE: wait->result = ForwardResult::NoInstance; break;
    case PORTAL_AUTH_FORWARD_REFUSED: wait->result = ForwardResult::Refused; break;
    default: wait->result = ForwardResult::Failed; break;
    }
    if (error) wait->message = QString::fromUtf8(portal_auth_error_message(error));
    wait->done = true;
    wait->changed.notify_all();
}

}  // namespace

ForwardResult Client::forwardRedirect(const Options &options, const QUrl &url, QString *errorString) {
    NativeOptions native(options);
    ForwardWait wait;
    if (!native.refusedField().isEmpty()) {
        wait.message = nulMessage(native.refusedField().toLatin1().constData());
    } else if (portal_auth_forward_redirect(native.get(), url.toEncoded().constData(), onForwarded, &wait) == PORTAL_AUTH_OK) {
        // Each of its steps waits at most 5 s: the library bounds this wait.
        std::unique_lock<std::mutex> held(wait.lock);
        wait.changed.wait(held, [&wait] { return wait.done; });
    } else {
        wait.message = QStringLiteral("The library refused the URL.");
    }
    if (errorString) *errorString = wait.message;
    return wait.result;
}

}  // namespace PortalAuthQt
