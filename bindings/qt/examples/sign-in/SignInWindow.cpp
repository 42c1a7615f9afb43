#include "SignInWindow.h"

#include <QVBoxLayout>

using PortalAuthQt::Reply;
using PortalAuthQt::TotpStep;

SignInWindow::SignInWindow(const PortalAuthQt::Options &options, QWidget *parent)
    : QWidget(parent),
      auth_(options, this),
      status_(new QLabel(tr("Looking for your session…"))),
      email_(new QLineEdit),
      sendLink_(new QPushButton(tr("Email me a sign-in link"))),
      google_(new QPushButton(tr("Sign in with Google"))),
      qrCode_(new QLabel),
      enrollmentKey_(new QLabel),
      code_(new QLineEdit),
      verify_(new QPushButton(tr("Verify"))),
      signOut_(new QPushButton(tr("Sign out"))) {
    setWindowTitle(tr("Portal sign-in"));
    email_->setPlaceholderText(tr("you@example.com"));
    code_->setPlaceholderText(tr("Code from your authenticator app"));
    enrollmentKey_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    const QList<QPair<QWidget *, const char *>> widgets{
        {status_, "status"}, {email_, "email"}, {sendLink_, "sendLink"}, {google_, "google"}, {qrCode_, "qrCode"},
        {enrollmentKey_, "enrollmentKey"}, {code_, "code"}, {verify_, "verify"}, {signOut_, "signOut"}};
    for (const auto &[widget, name] : widgets) {
        widget->setObjectName(QLatin1String(name));  // the names the sample's test finds them by
        layout->addWidget(widget);
    }

    connect(&auth_, &PortalAuthQt::Client::sessionChanged, this, &SignInWindow::showSession);
    connect(&auth_, &PortalAuthQt::Client::totpRequired, this, &SignInWindow::showStep);
    connect(sendLink_, &QPushButton::clicked, this, [this] {
        status_->setText(tr("A sign-in link is on its way to %1. Open it on this computer.").arg(email_->text()));
        settle(auth_.signInWithMagicLink(email_->text()));
    });
    connect(google_, &QPushButton::clicked, this, [this] {
        status_->setText(tr("Continue in your browser."));
        settle(auth_.signInWithGoogle());
    });
    connect(verify_, &QPushButton::clicked, this, &SignInWindow::verifyCode);
    connect(code_, &QLineEdit::returnPressed, this, &SignInWindow::verifyCode);
    connect(signOut_, &QPushButton::clicked, this, [this] { settle(auth_.signOut()); });

    if (!auth_.isValid()) {
        status_->setText(auth_.errorString());
        return;
    }
    showStep(nullptr);
    showSession();
    settle(auth_.restoreSession());
}

void SignInWindow::showSession() {
    const bool signedIn = auth_.isSignedIn();
    status_->setText(signedIn ? tr("Signed in as %1.").arg(auth_.endUserId()) : tr("Not signed in."));
    email_->setVisible(!signedIn);
    sendLink_->setVisible(!signedIn);
    google_->setVisible(!signedIn);
    signOut_->setVisible(signedIn);
    if (signedIn) showStep(nullptr);
}

void SignInWindow::showStep(TotpStep *step) {
    if (step_ && step_ != step) step_->deleteLater();
    step_ = step;
    const bool enrolling = step && step->needsEnrollment();
    // Painted at the screen's pixel ratio: whole device pixels a module, crisp on HiDPI.
    qrCode_->setPixmap(enrolling ? QPixmap::fromImage(step->qrCode(QSize(220, 220), devicePixelRatioF())) : QPixmap());
    enrollmentKey_->setText(enrolling ? tr("Or enter this key by hand: %1").arg(step->enrollmentKey()) : QString());
    qrCode_->setVisible(enrolling);
    enrollmentKey_->setVisible(enrolling);
    code_->setVisible(step != nullptr);
    verify_->setVisible(step != nullptr);
    code_->clear();
    if (step) status_->setText(enrolling ? tr("Scan this code with your authenticator app, then type the code it shows.")
                                         : tr("Type the code from your authenticator app."));
}

void SignInWindow::verifyCode() {
    if (!step_) return;
    const QString code = TotpStep::normalizedCode(code_->text());
    if (code.isEmpty()) {
        status_->setText(tr("The code is six digits."));
        return;
    }
    settle(step_->verify(code));
}

void SignInWindow::settle(Reply *reply) {
    connect(reply, &Reply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!reply->error()) return;  // the client's signals show what changed
        // The user's sentence where the library has one (keyed by reason for translations),
        // else the developer's message; a refused code leaves the same step to retry.
        status_->setText(reply->userMessage().isEmpty() ? reply->errorString() : reply->userMessage());
        if (reply->reason() == PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED) showStep(nullptr);
        if (reply->reason() == PORTAL_AUTH_REASON_NO_BROWSER) {
            status_->setText(tr("%1 Open this address in a browser: %2").arg(reply->userMessage(), reply->url().toString()));
        }
    });
}
