// A Portal Client Auth client for a Qt application: the C library's portal_auth client with
// a completion queue of its own, watched by a QSocketNotifier in the client's thread, so
// that every reply finishes and every signal comes in that thread, whatever else in the
// process uses the library. Use it from its thread, as any QObject.
//
//   PortalAuthQt::Options options;
//   options.authEnvironmentId = "env";
//   options.redirectUrl = "http://127.0.0.1:8765/callback";
//   PortalAuthQt::Client auth(options);
//   connect(&auth, &PortalAuthQt::Client::sessionChanged, this, &Window::showUser);
//   connect(&auth, &PortalAuthQt::Client::totpRequired, this, &Window::askForCode);
//   auth.restoreSession();
//   auto *reply = auth.signInWithGoogle();
//   connect(reply, &PortalAuthQt::Reply::finished, this, [this, reply] {
//       if (reply->error()) statusBar()->showMessage(reply->userMessage());
//       reply->deleteLater();
//   });
#pragma once

#include <PortalAuthQt/Export.h>
#include <PortalAuthQt/Options.h>
#include <PortalAuthQt/Reply.h>
#include <PortalAuthQt/TotpStep.h>

#include <QObject>
#include <QSet>
#include <QString>
#include <QUrl>

#include <functional>
#include <memory>

#include <portal_auth.h>

class QSocketNotifier;

namespace PortalAuthQt {

struct CallState;
struct OpenerLink;

// Opens an authorize URL in a browser; called in the client's thread. Return false when no
// browser could be opened: the sign-in then fails at once with PORTAL_AUTH_REASON_NO_BROWSER
// and the reply's url() is the URL to show.
using Opener = std::function<bool(const QUrl &url)>;

// What became of a redirect handed to the running instance (PORTAL_AUTH_FORWARD_*).
enum class ForwardResult { Taken, NoInstance, Refused, Failed };

class PORTAL_AUTH_QT_EXPORT Client : public QObject {
    Q_OBJECT
    Q_PROPERTY(bool signedIn READ isSignedIn NOTIFY sessionChanged)
    Q_PROPERTY(QString endUserId READ endUserId NOTIFY sessionChanged)
public:
    // Checks the options (no network or keyring I/O). A client that could not be made says
    // why in error()/errorString(), and each of its calls finishes with that error.
    explicit Client(const Options &options, QObject *parent = nullptr);
    // Cancels the calls in flight: their replies never finish. A grant already on the wire
    // is still exchanged and its session stored, as the library promises.
    ~Client() override;

    bool isValid() const;
    portal_auth_code error() const;
    QString errorString() const;

    bool isSignedIn() const;
    QString endUserId() const;

    // The opener of the browser sign-ins called from now on (one already called keeps the
    // opener installed then). The default calls QDesktopServices::openUrl in the
    // application's main thread and reports its result.
    void setOpener(Opener opener);

    MethodsReply *getMethods();
    // Finds the persisted session: signed in, or not (no error) when there is none.
    SignInReply *restoreSession();
    Reply *sendMagicLink(const QString &email);
    // Emails a link and waits for it (up to timeoutMs; zero or less: 15 minutes) on the
    // loopback redirect URL, or for handleRedirect() with the pasted link.
    SignInReply *signInWithMagicLink(const QString &email, int timeoutMs = 0);
    // Opens the provider in the browser and waits (up to timeoutMs; zero or less: 5 minutes).
    SignInReply *signInWithGoogle(int timeoutMs = 0);
    SignInReply *signInWithApple(int timeoutMs = 0);
    // A redirect URL the application received (the desktop's URL handler, a pasted link).
    SignInReply *handleRedirect(const QUrl &url);
    // Signs the user out as every binding's clear_persisted_session does: the persisted session
    // is deleted, whoever's it is, and the client's memory of its last grant forgotten; on
    // success the client lets go of the session it held.
    Reply *signOut();
    // Takes the redirects that the application's next instances forward (forwardRedirect):
    // each signs in as handleRedirect would (sessionChanged, totpRequired; a failure:
    // redirectFailed). The reply finishes when listening ends (deleting it ends it).
    Reply *listenForRedirects();

    // In the URL handler the desktop started: hands `url` to the running instance of the
    // application (the one listening), waiting at most a few seconds. `errorString` (may be
    // null) receives why with ForwardResult::Failed.
    static ForwardResult forwardRedirect(const Options &options, const QUrl &url, QString *errorString = nullptr);

Q_SIGNALS:
    // Signed in, signed out, or another user.
    void sessionChanged();
    // A sign-in needs a TOTP code: `step` (owned by the client) verifies it.
    void totpRequired(PortalAuthQt::TotpStep *step);
    // A forwarded redirect failed: what a SignInReply would have said.
    void redirectFailed(portal_auth_code error, const QString &userMessage, const QString &errorString);

private:
    friend struct CallState;
    friend class TotpStep;

    // A reply that finishes later as INVALID_ARGUMENT: `field` holds a NUL character.
    template <typename R> R *refusedNul(const char *field);
    // Starts a call through `start`, which gets the state to pass as user_data and where the
    // call handle goes; refused starts finish the reply later.
    template <typename R, typename Start> R *begin(Start start, bool opens = false);
    SignInReply *verifyTotp(const QByteArray &code, const QByteArray &userJwt);
    // A sign-in's result: the session kept, or the TOTP step made; signals emitted.
    TotpStep *take(const portal_auth_result *result);
    void takeSession(portal_auth_session *session);

    portal_auth *native_ = nullptr;
    portal_auth_completion_queue *queue_ = nullptr;
    QSocketNotifier *notifier_ = nullptr;
    portal_auth_session *session_ = nullptr;
    QString endUserId_;
    QSet<CallState *> calls_;
    std::shared_ptr<OpenerLink> opener_;
    portal_auth_code error_ = PORTAL_AUTH_OK;
    QString errorString_;
};

}  // namespace PortalAuthQt
