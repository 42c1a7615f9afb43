// The reply to one call of a Client, in the style of QNetworkReply and KJob: finished() is
// emitted once, never inside the call that made the reply, in the client's thread. Deleting
// the reply (or its parent, by default the client) cancels the call where it can still be
// cancelled, and no signal of it arrives afterwards; a sign-in that was already exchanging
// its grant still completes, and the client still takes its session (sessionChanged).
#pragma once

#include <PortalAuthQt/Export.h>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <portal_auth.h>

namespace PortalAuthQt {

class TotpStep;
struct CallState;

class PORTAL_AUTH_QT_EXPORT Reply : public QObject {
    Q_OBJECT
public:
    ~Reply() override;

    bool isFinished() const;
    // The outcome's code: PORTAL_AUTH_OK until finished, and on success; else one of
    // portal_auth.h's PORTAL_AUTH_E_* (its @ref errors group is the manual).
    portal_auth_code error() const;
    // Which case of the code, where it has several (PORTAL_AUTH_REASON_*); 0 for none.
    portal_auth_reason reason() const;
    // The code's name as the library spells it ("UNAUTHORIZED", portal_auth_code_name);
    // empty on success.
    QString errorName() const;
    // The developer's message; never a secret. Empty on success.
    QString errorString() const;
    // A sentence to show the user as it is, keyed by reason() for an app's own
    // translations (portal_auth_reason_user_message); empty when the reason has none.
    QString userMessage() const;
    // With PORTAL_AUTH_REASON_NO_BROWSER: the URL to show the user instead.
    QUrl url() const;
    // PORTAL_AUTH_E_RATE_LIMITED and _HTTP_STATUS: the delay the server asked for before
    // another attempt (its Retry-After), in seconds; -1 when it named none. Nothing is
    // retried for the application.
    qint64 retryAfter() const;
    // Asks the call to stop (portal_auth_call_cancel): finished() still comes, with
    // PORTAL_AUTH_E_SIGN_IN_CLOSED or _CANCELLED when the cancel took.
    void abort();

Q_SIGNALS:
    void finished();

protected:
    explicit Reply(QObject *parent);

private:
    friend class Client;
    friend struct CallState;
    // Takes the outcome's error (NULL: success) and emits finished().
    void finish(const portal_auth_error *error);
    // Finishes, on the next turn of the client's event loop, with an error of this layer's
    // (a call refused before it started).
    void finishLater(portal_auth_code code, const QString &message);

    CallState *state_ = nullptr;
    bool finished_ = false;
    portal_auth_code code_ = PORTAL_AUTH_OK;
    portal_auth_reason reason_ = 0;
    QString message_;
    QString userMessage_;
    QUrl url_;
    qint64 retryAfter_ = -1;
};

// getMethods(): the sign-in methods the environment has enabled.
class PORTAL_AUTH_QT_EXPORT MethodsReply : public Reply {
    Q_OBJECT
public:
    QStringList methods() const;
    bool autoCreateWallet() const;

private:
    friend struct CallState;
    friend class Client;
    using Reply::Reply;
    QStringList methods_;
    bool autoCreateWallet_ = false;
};

// A call that may sign the user in: restore, the sign-ins, a redirect, a TOTP code.
class PORTAL_AUTH_QT_EXPORT SignInReply : public Reply {
    Q_OBJECT
public:
    // Signed in: the client holds the session now (Client::endUserId()).
    bool isSignedIn() const;
    QString endUserId() const;
    // Two-step verification is still to do: the step (also given by Client::totpRequired);
    // owned by the client. Null otherwise.
    TotpStep *totpStep() const;

private:
    friend struct CallState;
    friend class Client;
    using Reply::Reply;
    bool signedIn_ = false;
    QString endUserId_;
    QPointer<TotpStep> totpStep_;
};

}  // namespace PortalAuthQt
