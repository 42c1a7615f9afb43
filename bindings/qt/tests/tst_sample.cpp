// The sample app's window, driven as a user would under Xvfb against the emulator, in a
// private keyring: restore, the magic link (its email opened in "a browser"), the QR code
// read by zbarimg off a screenshot of the window, a wrong code, the right one typed as an
// authenticator app shows it, sign-out. Waits are QSignalSpy waits for the client's signals
// or the replies' finished(), bounded only against a broken library.
#include "SignInWindow.h"

#include "Emulator.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace PortalAuthQt;

namespace {

constexpr int patience = 60000;

// The reply the window's last action made: the client's newest child reply.
Reply *lastReply(Client *client) {
    const QList<Reply *> replies = client->findChildren<Reply *>(Qt::FindDirectChildrenOnly);
    return replies.isEmpty() ? nullptr : replies.last();
}

bool settles(Reply *reply) {
    if (!reply) return false;
    QSignalSpy spy(reply, &Reply::finished);
    return reply->isFinished() || spy.wait(patience);
}

}  // namespace

class SampleTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theWholeJourneyInTheWindow() {
        QVERIFY(Emulator::control(QStringLiteral("reset"), QJsonObject{}).contains(QStringLiteral("ok")));
        Options options;
        options.authEnvironmentId = QStringLiteral("qt-sample");
        options.redirectUrl = QStringLiteral("http://127.0.0.1:%1/callback").arg(Emulator::freePort());
        options.apiHost = Emulator::host();
        options.magicLinkFromEmail = QStringLiteral("hello@auth.example.com");
        options.magicLinkTemplateId = QStringLiteral("tmpl");
        options.applicationId = QStringLiteral("io.portalhq.QtSample");
        Emulator::environment(options.authEnvironmentId, options.redirectUrl, true);

        SignInWindow window(options);
        auto *client = window.findChild<Client *>();
        QVERIFY(client);
        QVERIFY(settles(lastReply(client)));  // the restore at start-up
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *status = window.findChild<QLabel *>(QStringLiteral("status"));
        QCOMPARE(status->text(), QStringLiteral("Not signed in."));

        const QString email = QStringLiteral("sample@example.com");
        QSignalSpy steps(client, &Client::totpRequired);
        QTest::keyClicks(window.findChild<QLineEdit *>(QStringLiteral("email")), email);
        QTest::mouseClick(window.findChild<QPushButton *>(QStringLiteral("sendLink")), Qt::LeftButton);
        QVERIFY(Emulator::browse(QUrl(Emulator::outboxLink(email, QStringLiteral("emailLink")))));
        QVERIFY(steps.wait(patience));

        // What the user sees: the X server's pixels of the window, read by zbarimg.
        window.repaint();
        QTemporaryDir folder;
        const QString shot = folder.filePath(QStringLiteral("window.png"));
        QVERIFY(window.screen()->grabWindow(window.winId()).save(shot));
        QProcess zbar;
        zbar.start(QStringLiteral("zbarimg"), {QStringLiteral("--raw"), QStringLiteral("-q"), shot});
        QVERIFY(zbar.waitForFinished(patience));
        const QString link = QString::fromUtf8(zbar.readAllStandardOutput()).trimmed();
        QVERIFY2(link.startsWith(QStringLiteral("otpauth://totp/")), qPrintable(link));
        const QString key = window.findChild<QLabel *>(QStringLiteral("enrollmentKey"))->text().section(QLatin1Char(' '), -1);
        QVERIFY(link.contains(QStringLiteral("secret=") + key));

        auto *code = window.findChild<QLineEdit *>(QStringLiteral("code"));
        auto *verify = window.findChild<QPushButton *>(QStringLiteral("verify"));
        const QString right = Emulator::currentCode(options.authEnvironmentId, email);
        QTest::keyClicks(code, QStringLiteral("%1").arg((right.toInt() + 500000) % 1000000, 6, 10, QChar(u'0')));
        QTest::mouseClick(verify, Qt::LeftButton);
        QVERIFY(settles(lastReply(client)));
        QCOMPARE(status->text(), QString::fromUtf8(portal_auth_reason_user_message(PORTAL_AUTH_REASON_TOTP_CODE_REJECTED)));

        QSignalSpy changes(client, &Client::sessionChanged);
        code->clear();
        QTest::keyClicks(code, right.left(3) + QStringLiteral(" ") + right.mid(3));
        QTest::keyClick(code, Qt::Key_Return);
        QVERIFY(changes.wait(patience));
        QCOMPARE(status->text(), QStringLiteral("Signed in as %1.").arg(client->endUserId()));
        QVERIFY(client->endUserId().startsWith(QStringLiteral("eu_")));

        QTest::mouseClick(window.findChild<QPushButton *>(QStringLiteral("signOut")), Qt::LeftButton);
        QVERIFY(changes.wait(patience));
        QCOMPARE(status->text(), QStringLiteral("Not signed in."));
    }
};

QTEST_MAIN(SampleTest)
#include "tst_sample.moc"
