#include "Calls.h"

#include <PortalAuthQt/TotpStep.h>

namespace PortalAuthQt {

Reply::Reply(QObject *parent) : QObject(parent) {}

Reply::~Reply() {
    // The completion still comes, exactly once, and finds no reply: nothing is emitted.
    if (!state_) return;
    state_->reply = nullptr;
    portal_auth_call_cancel(state_->call);
}

bool Reply::isFinished() const { return finished_; }
portal_auth_code Reply::error() const { return code_; }
portal_auth_reason Reply::reason() const { return reason_; }
QString Reply::errorName() const { return code_ ? QString::fromUtf8(portal_auth_code_name(code_)) : QString(); }
QString Reply::errorString() const { return message_; }
QString Reply::userMessage() const { return userMessage_; }
QUrl Reply::url() const { return url_; }
qint64 Reply::retryAfter() const { return retryAfter_; }

void Reply::abort() {
    if (state_) portal_auth_call_cancel(state_->call);
}

void Reply::finish(const portal_auth_error *error) {
    if (error) {
        code_ = portal_auth_error_code(error);
        reason_ = portal_auth_error_reason(error);
        message_ = QString::fromUtf8(portal_auth_error_message(error));
        if (reason_) userMessage_ = QString::fromUtf8(portal_auth_reason_user_message(reason_));
        if (const char *url = portal_auth_error_url(error)) url_ = QUrl::fromEncoded(QByteArray(url));
        retryAfter_ = portal_auth_error_retry_after(error);
    }
    finished_ = true;
    Q_EMIT finished();
}

void Reply::finishLater(portal_auth_code code, const QString &message) {
    code_ = code;
    message_ = message;
    QMetaObject::invokeMethod(this, [this] {
        finished_ = true;
        Q_EMIT finished();
    }, Qt::QueuedConnection);
}

QStringList MethodsReply::methods() const { return methods_; }
bool MethodsReply::autoCreateWallet() const { return autoCreateWallet_; }

bool SignInReply::isSignedIn() const { return signedIn_; }
QString SignInReply::endUserId() const { return endUserId_; }
TotpStep *SignInReply::totpStep() const { return totpStep_.data(); }

}  // namespace PortalAuthQt
