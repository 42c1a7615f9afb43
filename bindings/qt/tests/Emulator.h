// The Portal emulator the tests run against (PORTAL_AUTH_TEST_API_HOST), driven through its
// /_emulator/ control endpoints with curl, and what a browser would do with its pages.
#pragma once

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QUrlQuery>

#include <optional>

namespace Emulator {

inline QString host() { return qEnvironmentVariable("PORTAL_AUTH_TEST_API_HOST"); }

// curl with `arguments`; its standard output, or empty when it failed.
inline QByteArray curl(const QStringList &arguments) {
    QProcess process;
    process.start(QStringLiteral("curl"), QStringList{QStringLiteral("-sS"), QStringLiteral("--max-time"), QStringLiteral("60")} + arguments);
    if (!process.waitForFinished(90000) || process.exitCode() != 0) return {};
    return process.readAllStandardOutput();
}

// GET (no body) or POST a control endpoint; its JSON answer.
inline QJsonObject control(const QString &pathAndQuery, const std::optional<QJsonObject> &body = std::nullopt) {
    QStringList arguments{host() + QStringLiteral("/_emulator/") + pathAndQuery};
    if (body) {
        arguments << QStringLiteral("-H") << QStringLiteral("Content-Type: application/json") << QStringLiteral("--data-binary")
                  << QString::fromUtf8(QJsonDocument(*body).toJson(QJsonDocument::Compact));
    }
    return QJsonDocument::fromJson(curl(arguments)).object();
}

// An environment allowing the magic link and Google to `redirect`, with or without TOTP.
inline void environment(const QString &id, const QString &redirect, bool totp) {
    control(QStringLiteral("environments"),
            QJsonObject{{"id", id}, {"allowedMethods", QJsonArray{"EMAIL_MAGIC_LINK", "GOOGLE"}},
                        {"redirectUrls", QJsonArray{redirect}}, {"totpRequired", totp},
                        {"accountAbstraction", false}, {"autoCreateWallet", false}});
}

inline QString currentCode(const QString &environmentId, const QString &email) {
    QUrlQuery query{{"environmentId", environmentId}, {"email", email}};
    return control(QStringLiteral("totp?") + query.toString(QUrl::FullyEncoded)).value("code").toString();
}

// The last email to `email`, once `count` were sent: its `key` ("link", the redirect with
// its grant; "emailLink", the button a user clicks).
inline QString outboxLink(const QString &email, const QString &key, int count = 1) {
    QUrlQuery query{{"email", email}, {"count", QString::number(count)}, {"timeout", "30"}};
    const QJsonArray messages = control(QStringLiteral("outbox?") + query.toString(QUrl::FullyEncoded)).value("messages").toArray();
    return messages.isEmpty() ? QString() : messages.last().toObject().value(key).toString();
}

// A magic-link redirect to `redirect` carrying a fresh grant.
inline QUrl grantRedirect(const QString &redirect, const QString &environmentId, const QString &email) {
    const QJsonObject grant =
        control(QStringLiteral("grants"), QJsonObject{{"environmentId", environmentId}, {"email", email}, {"kind", "magic"}});
    return QUrl(QStringLiteral("%1?token=%2&authMethod=EMAIL_MAGIC_LINK").arg(redirect, grant.value("token").toString()));
}

// What a browser does with a page: loads it, following its redirects (to the loopback
// listener). Detached: the opener answers at once, as a browser's launch does.
inline bool browse(const QUrl &url) {
    return QProcess::startDetached(QStringLiteral("curl"), {QStringLiteral("-sS"), QStringLiteral("-L"), QStringLiteral("-o"),
                                                            QStringLiteral("/dev/null"), url.toString(QUrl::FullyEncoded)});
}

// A loopback port nobody listens on now, for the test's own listener, which the emulator hands
// out (emulator/README.md, `GET loopback-port`); -1 when it handed out none.
inline int freePort() { return control(QStringLiteral("loopback-port")).value("port").toInt(-1); }

}  // namespace Emulator
