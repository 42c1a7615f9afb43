#include <PortalAuthQt/Client.h>
#include <PortalAuthQt/TotpStep.h>

#include <QPainter>

#include <string.h>

namespace PortalAuthQt {

namespace {

// Wipes a secret held in a QByteArray of this class's own (never shared, so data() does not
// copy it first); explicit_bzero is not optimised away.
void wipe(QByteArray &secret) {
    if (!secret.isEmpty()) explicit_bzero(secret.data(), static_cast<size_t>(secret.size()));
    secret.clear();
}

}  // namespace

TotpStep::TotpStep(Client *client, const char *userJwt, const char *endUserId, const char *totpLink, qint64 expiresAt)
    : QObject(client),
      client_(client),
      userJwt_(userJwt ? userJwt : ""),
      totpLink_(totpLink ? totpLink : ""),
      endUserId_(QString::fromUtf8(endUserId)) {
    // The library's "no exp" is 0 (portal_auth_result_totp_expires_at).
    if (expiresAt > 0) expiresAt_ = QDateTime::fromSecsSinceEpoch(expiresAt);
}

TotpStep::~TotpStep() {
    wipe(userJwt_);
    wipe(totpLink_);
}

QString TotpStep::endUserId() const { return endUserId_; }
QDateTime TotpStep::expiresAt() const { return expiresAt_; }
bool TotpStep::needsEnrollment() const { return !totpLink_.isEmpty(); }

QString TotpStep::enrollmentKey() const {
    if (totpLink_.isEmpty()) return {};
    char *secret = nullptr;
    if (portal_auth_totp_secret(totpLink_.constData(), &secret, nullptr) != PORTAL_AUTH_OK) return {};
    QString key = QString::fromUtf8(secret);
    portal_auth_string_free(secret);
    return key;
}

QImage TotpStep::qrCode(const QSize &size, qreal devicePixelRatio) const {
    if (totpLink_.isEmpty() || size.isEmpty() || devicePixelRatio <= 0) return {};
    int32_t side = 0;
    uint8_t *modules = nullptr;
    size_t length = 0;
    if (portal_auth_totp_qr_matrix(totpLink_.constData(), &side, &modules, &length, nullptr) != PORTAL_AUTH_OK) return {};
    const QSize pixels = (QSizeF(size) * devicePixelRatio).toSize();
    // Whole device pixels a module, so that no module blurs into its neighbour.
    const int module = qMin(pixels.width(), pixels.height()) / side;
    QImage image;
    if (module > 0) {
        image = QImage(pixels, QImage::Format_RGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        const QPoint origin((pixels.width() - module * side) / 2, (pixels.height() - module * side) / 2);
        const int rowBytes = (side + 7) / 8;
        for (int row = 0; row < side; row++) {
            for (int column = 0; column < side; column++) {
                if (modules[row * rowBytes + column / 8] & (0x80 >> (column % 8))) {
                    painter.fillRect(origin.x() + column * module, origin.y() + row * module, module, module, Qt::black);
                }
            }
        }
        painter.end();
        image.setDevicePixelRatio(devicePixelRatio);
    }
    portal_auth_bytes_free(modules);
    return image;
}

QString TotpStep::normalizedCode(const QString &typed) {
    char code[PORTAL_AUTH_TOTP_CODE_SIZE];
    if (typed.contains(QChar(u'\0'))) return {};
    if (portal_auth_totp_code_normalize(typed.toUtf8().constData(), code) != PORTAL_AUTH_TRUE) return {};
    return QString::fromLatin1(code);
}

SignInReply *TotpStep::verify(const QString &code) {
    return client_->verifyTotp(code.toUtf8(), userJwt_);
}

}  // namespace PortalAuthQt
