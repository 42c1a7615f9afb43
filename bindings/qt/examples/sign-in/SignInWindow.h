// The sample's window: the whole journey of a Qt app on portal-auth-qt. Restore at start,
// the magic link in the app (nothing to paste), Google in the system browser, TOTP with the
// QR code painted for the screen's pixel ratio, sign-out, errors shown as the user's
// sentences.
#pragma once

#include <PortalAuthQt/PortalAuthQt.h>

#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QWidget>

class SignInWindow : public QWidget {
    Q_OBJECT
public:
    explicit SignInWindow(const PortalAuthQt::Options &options, QWidget *parent = nullptr);

private:
    void showSession();
    void showStep(PortalAuthQt::TotpStep *step);
    void verifyCode();
    // Shows what a finished reply left to say, and lets it go.
    void settle(PortalAuthQt::Reply *reply);

    PortalAuthQt::Client auth_;
    QPointer<PortalAuthQt::TotpStep> step_;
    QLabel *status_;
    QLineEdit *email_;
    QPushButton *sendLink_;
    QPushButton *google_;
    QLabel *qrCode_;
    QLabel *enrollmentKey_;
    QLineEdit *code_;
    QPushButton *verify_;
    QPushButton *signOut_;
};
