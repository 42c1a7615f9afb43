// Two-step verification still to do after a sign-in: the step a SignInReply and
// Client::totpRequired hand over. It holds the step's userJwt and, on a first sign-in, the
// enrollment link: secrets, wiped when the step is destroyed, and never shown by this class
// but as the enrollment key and QR code the user needs.
#pragma once

#include <PortalAuthQt/Export.h>

#include <QByteArray>
#include <QDateTime>
#include <QImage>
#include <QObject>
#include <QSize>
#include <QString>

namespace PortalAuthQt {

class Client;
class SignInReply;

class PORTAL_AUTH_QT_EXPORT TotpStep : public QObject {
    Q_OBJECT
public:
    ~TotpStep() override;

    QString endUserId() const;
    // When the step expires (its userJwt's exp); invalid when the JWT has none. After it,
    // verify() fails with PORTAL_AUTH_REASON_TOTP_STEP_EXPIRED: sign in again.
    QDateTime expiresAt() const;
    // A first sign-in: the user enrolls an authenticator app (qrCode(), enrollmentKey()).
    bool needsEnrollment() const;
    // The key to type into an authenticator app by hand; empty when not enrolling.
    QString enrollmentKey() const;
    // The enrollment QR code, painted from its modules: `size` in device-independent pixels
    // at `devicePixelRatio`, crisp (whole device pixels a module), centred on white. A null
    // image when not enrolling or for an empty size.
    QImage qrCode(const QSize &size, qreal devicePixelRatio = 1.0) const;

    // What the user typed, without the spaces and dashes authenticator apps show ("123 456"),
    // when six digits remain; else empty: ask again, nothing sent.
    static QString normalizedCode(const QString &typed);
    // Verifies a code with this step (as given: normalize it first). On
    // PORTAL_AUTH_REASON_TOTP_CODE_REJECTED the user may type another code for the same step.
    SignInReply *verify(const QString &code);

private:
    friend class Client;
    TotpStep(Client *client, const char *userJwt, const char *endUserId, const char *totpLink, qint64 expiresAt);

    Client *client_;
    QByteArray userJwt_;
    QByteArray totpLink_;
    QString endUserId_;
    QDateTime expiresAt_;
};

}  // namespace PortalAuthQt
