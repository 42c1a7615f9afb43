// portal-auth-qt against the Portal emulator, inside a private keyring, under Xvfb: the whole
// journey (restore, the in-app magic link, TOTP enrollment with its QR code read back by
// zbarimg, a refused code, sign-out), sign-out over another sign-in's session, Google
// through the opener, no browser, a reply deleted in flight, a client destroyed in flight,
// two clients on two threads, forwarded redirects; a CA file refused, a refused connection's
// reason, a server's Retry-After.
// Waits are QSignalSpy waits for the signal itself, bounded only against a broken library.
#include <PortalAuthQt/PortalAuthQt.h>

#include "Emulator.h"

#include <QGuiApplication>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <atomic>
#include <thread>

using namespace PortalAuthQt;

namespace {

constexpr int patience = 60000;  // ms: a bound for a broken library, never a wait for success

// Options of a new environment at the emulator (with or without TOTP) whose redirect URL is
// a loopback port free now.
Options newEnvironment(const QString &environment, bool totp = false, Storage storage = Storage::Memory) {
    Options options;
    options.authEnvironmentId = environment;
    options.redirectUrl = QStringLiteral("http://127.0.0.1:%1/callback").arg(Emulator::freePort());
    Emulator::environment(environment, options.redirectUrl, totp);
    options.apiHost = Emulator::host();
    options.magicLinkFromEmail = QStringLiteral("hello@auth.example.com");
    options.magicLinkTemplateId = QStringLiteral("tmpl");
    options.applicationId = QStringLiteral("io.portalhq.QtTest");
    options.storage = storage;
    return options;
}

// Waits for `reply` to finish (it may have already).
bool finished(Reply *reply) {
    if (reply->isFinished()) return true;
    QSignalSpy spy(reply, &Reply::finished);
    return spy.wait(patience);
}

// The text zbarimg reads off `image`.
QString readQr(const QImage &image) {
    QTemporaryDir folder;
    const QString path = folder.filePath(QStringLiteral("qr.png"));
    if (!image.save(path)) return {};
    QProcess zbar;
    zbar.start(QStringLiteral("zbarimg"), {QStringLiteral("--raw"), QStringLiteral("-q"), path});
    zbar.waitForFinished(patience);
    return QString::fromUtf8(zbar.readAllStandardOutput()).trimmed();
}

}  // namespace

// The log audit: with PORTAL_AUTH_TEST_LOG_FILE set, every line the library logs goes there
// as `qt<TAB>level<TAB>message`, one write each (scripts/log-audit.py checks them for secrets).
FILE *auditLog = nullptr;

void auditLine(void *, portal_auth_log_level level, const char *message) {
    if (auditLog && message) fprintf(auditLog, "qt\t%d\t%s\n", static_cast<int>(level), message);
}

class ClientTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() {
        // The outbox and the users of earlier runs go: each email waited for is this run's.
        QVERIFY(Emulator::control(QStringLiteral("reset"), QJsonObject{}).contains(QStringLiteral("ok")));
        const QByteArray path = qgetenv("PORTAL_AUTH_TEST_LOG_FILE");
        if (path.isEmpty()) return;
        auditLog = fopen(path.constData(), "a");
        QVERIFY(auditLog);
        setvbuf(auditLog, nullptr, _IOLBF, 0);
        QCOMPARE(portal_auth_set_log_handler(auditLine, nullptr), PORTAL_AUTH_OK);
    }

    void aClientThatCannotBeMadeSaysWhyInEachReply() {
        Client client(Options{});
        QVERIFY(!client.isValid());
        QCOMPARE(client.error(), PORTAL_AUTH_E_INVALID_ARGUMENT);
        Reply *reply = client.getMethods();
        QVERIFY(!reply->isFinished());  // never inside the call that made it
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_E_INVALID_ARGUMENT);
        QCOMPARE(reply->errorName(), QStringLiteral("INVALID_ARGUMENT"));
        QVERIFY(!reply->errorString().isEmpty());
    }

    void aNulCharacterIsRefusedNotCutShort() {
        Client client(newEnvironment(QStringLiteral("qt-nul")));
        Reply *reply = client.sendMagicLink(QStringLiteral("someone@example.com") + QChar(u'\0') + QStringLiteral("x"));
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_E_INVALID_ARGUMENT);
        QVERIFY(reply->errorString().contains(QStringLiteral("email")));
    }

    void aCaFileThatIsNotThereLeavesTheClientInvalid() {
        Options options = newEnvironment(QStringLiteral("qt-ca-file"));
        options.caFile = QStringLiteral("/nonexistent/company-ca.pem");
        Client client(options);
        QVERIFY(!client.isValid());
        QCOMPARE(client.error(), PORTAL_AUTH_E_INVALID_ARGUMENT);
        QVERIFY2(client.errorString().contains(QStringLiteral("ca_file")), qPrintable(client.errorString()));
    }

    void aRefusedConnectionSaysSo() {
        Options options = newEnvironment(QStringLiteral("qt-refused"));
        options.apiHost = QStringLiteral("http://127.0.0.1:1");  // nothing listens on port 1
        Client client(options);
        MethodsReply *reply = client.getMethods();
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_E_NETWORK);
        QCOMPARE(reply->reason(), PORTAL_AUTH_REASON_CONNECTION_REFUSED);
        QVERIFY(!reply->userMessage().isEmpty());
        QCOMPARE(reply->retryAfter(), qint64(-1));
    }

    void theServersRetryAfterComesWithItsStatus() {
        Client client(newEnvironment(QStringLiteral("qt-retry-after")));
        Emulator::control(QStringLiteral("faults"),
                          QJsonObject{{"path", "/methods"}, {"kind", "status"}, {"status", 503}, {"retryAfter", "120"}});
        MethodsReply *reply = client.getMethods();
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_E_HTTP_STATUS);
        QCOMPARE(reply->retryAfter(), qint64(120));
    }

    void theJourneyEnrollsTotpAndSignsOut() {
        const QString environment = QStringLiteral("qt-journey"), email = QStringLiteral("journey@example.com");
        const Options options = newEnvironment(environment, true, Storage::Keyring);
        Client client(options);
        QVERIFY2(client.isValid(), qPrintable(client.errorString()));
        QSignalSpy changes(&client, &Client::sessionChanged);
        QSignalSpy steps(&client, &Client::totpRequired);

        SignInReply *restored = client.restoreSession();
        QVERIFY(finished(restored));
        QCOMPARE(restored->error(), PORTAL_AUTH_OK);
        QVERIFY(!restored->isSignedIn() && !client.isSignedIn());

        // The in-app magic link: the email's button opened in "a browser" lands on the
        // loopback listener the sign-in waits on.
        SignInReply *signIn = client.signInWithMagicLink(email);
        const QString button = Emulator::outboxLink(email, QStringLiteral("emailLink"));
        QVERIFY(!button.isEmpty());
        QVERIFY(Emulator::browse(QUrl(button)));
        QVERIFY(finished(signIn));
        QCOMPARE(signIn->error(), PORTAL_AUTH_OK);
        QVERIFY(!signIn->isSignedIn());
        TotpStep *step = signIn->totpStep();
        QVERIFY(step);
        QCOMPARE(steps.count(), 1);
        QCOMPARE(steps.at(0).at(0).value<TotpStep *>(), step);
        QVERIFY(step->needsEnrollment());
        QVERIFY(step->expiresAt() > QDateTime::currentDateTimeUtc());

        // The QR code, painted at 2x, reads back as the enrollment link with the key shown.
        const QImage code = step->qrCode(QSize(180, 180), 2.0);
        QCOMPARE(code.size(), QSize(360, 360));
        QCOMPARE(code.devicePixelRatio(), 2.0);
        const QString link = readQr(code);
        QVERIFY2(link.startsWith(QStringLiteral("otpauth://totp/")), qPrintable(link));
        QVERIFY(!step->enrollmentKey().isEmpty());
        QVERIFY(link.contains(QStringLiteral("secret=") + step->enrollmentKey()));
        QVERIFY(step->qrCode(QSize(10, 10)).isNull());  // too small for whole pixels a module

        // A wrong code: the same step may be used again.
        const QString right = Emulator::currentCode(environment, email);
        const QString wrong = QStringLiteral("%1").arg((right.toInt() + 500000) % 1000000, 6, 10, QChar(u'0'));
        SignInReply *refused = step->verify(wrong);
        QVERIFY(finished(refused));
        QCOMPARE(refused->error(), PORTAL_AUTH_E_UNAUTHORIZED);
        QCOMPARE(refused->reason(), PORTAL_AUTH_REASON_TOTP_CODE_REJECTED);
        QCOMPARE(refused->errorName(), QStringLiteral("UNAUTHORIZED"));
        QCOMPARE(refused->userMessage(), QString::fromUtf8(portal_auth_reason_user_message(PORTAL_AUTH_REASON_TOTP_CODE_REJECTED)));
        QVERIFY(!client.isSignedIn());

        SignInReply *verified = step->verify(TotpStep::normalizedCode(right.left(3) + QStringLiteral(" ") + right.mid(3)));
        QVERIFY(finished(verified));
        QCOMPARE(verified->error(), PORTAL_AUTH_OK);
        QVERIFY(verified->isSignedIn() && client.isSignedIn());
        QVERIFY(client.endUserId().startsWith(QStringLiteral("eu_")));
        QCOMPARE(verified->endUserId(), client.endUserId());
        QCOMPARE(changes.count(), 1);

        // Another client of the application finds the session in the keyring.
        {
            Client again(options);
            SignInReply *found = again.restoreSession();
            QVERIFY(finished(found));
            QVERIFY(found->isSignedIn());
            QCOMPARE(again.endUserId(), client.endUserId());
        }

        Reply *out = client.signOut();
        QVERIFY(finished(out));
        QCOMPARE(out->error(), PORTAL_AUTH_OK);
        QVERIFY(!client.isSignedIn() && client.endUserId().isEmpty());
        QCOMPARE(changes.count(), 2);
        Client after(options);
        SignInReply *none = after.restoreSession();
        QVERIFY(finished(none));
        QVERIFY(!none->isSignedIn() && none->error() == PORTAL_AUTH_OK);
    }

    void signingOutDeletesTheStoredSessionEvenAnotherSignInsOwn() {
        const Options options = newEnvironment(QStringLiteral("qt-sign-out"), false, Storage::Keyring);
        Client first(options), second(options);
        for (Client *client : {&first, &second}) {
            const QString email = client == &first ? QStringLiteral("first@example.com") : QStringLiteral("second@example.com");
            SignInReply *signIn = client->signInWithMagicLink(email);
            QVERIFY(Emulator::browse(QUrl(Emulator::outboxLink(email, QStringLiteral("emailLink")))));
            QVERIFY(finished(signIn));
            QCOMPARE(signIn->error(), PORTAL_AUTH_OK);
            QVERIFY(client->isSignedIn());
        }
        // The stored session is now the second sign-in's: the first client's sign-out deletes
        // it all the same, as clear_persisted_session does in every binding.
        Reply *out = first.signOut();
        QVERIFY(finished(out));
        QCOMPARE(out->error(), PORTAL_AUTH_OK);
        QVERIFY(!first.isSignedIn());
        Client after(options);
        SignInReply *none = after.restoreSession();
        QVERIFY(finished(none));
        QVERIFY(!none->isSignedIn() && none->error() == PORTAL_AUTH_OK);
    }

    void googleOpensThroughTheOpenerInTheClientsThread() {
        Client client(newEnvironment(QStringLiteral("qt-google")));
        QThread *openedOn = nullptr;
        client.setOpener([&openedOn](const QUrl &url) {
            openedOn = QThread::currentThread();
            return Emulator::browse(url);
        });
        SignInReply *reply = client.signInWithGoogle();
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_OK);
        QVERIFY(reply->isSignedIn() && client.isSignedIn());
        QCOMPARE(openedOn, QThread::currentThread());
    }

    void aSignInCallsTheOpenerInstalledWhenItWasCalled() {
        Client client(newEnvironment(QStringLiteral("qt-replaced-opener")));
        Emulator::curl({QStringLiteral("-X"), QStringLiteral("DELETE"), Emulator::host() + QStringLiteral("/_emulator/requests")});
        Emulator::control(QStringLiteral("faults"), QJsonObject{{"path", "/oauth/urls"}, {"kind", "hold"}});
        int first = 0, later = 0;
        client.setOpener([&first](const QUrl &url) {
            first++;
            return Emulator::browse(url);
        });
        SignInReply *reply = client.signInWithGoogle();
        Emulator::control(QStringLiteral("wait?path=/oauth/urls&count=1&timeout=30"));
        client.setOpener([&later](const QUrl &) {
            later++;
            return true;
        });
        Emulator::control(QStringLiteral("release"), QJsonObject{});
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_OK);
        QCOMPARE(first, 1);
        QCOMPARE(later, 0);
    }

    void noBrowserFailsAtOnceWithTheUrlToShow() {
        Client client(newEnvironment(QStringLiteral("qt-no-browser")));
        client.setOpener([](const QUrl &) { return false; });
        SignInReply *reply = client.signInWithGoogle(600000);  // at once, not after the timeout
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_E_SIGN_IN_UNAVAILABLE);
        QCOMPARE(reply->reason(), PORTAL_AUTH_REASON_NO_BROWSER);
        QVERIFY(reply->url().toString().contains(QStringLiteral("/oauth/google/authorize")));
        QVERIFY(!reply->userMessage().isEmpty());
    }

    void deletingAReplyCancelsItsCallAndNothingArrives() {
        Client client(newEnvironment(QStringLiteral("qt-deleted-reply")));
        client.setOpener([](const QUrl &) { return false; });
        QSignalSpy changes(&client, &Client::sessionChanged);
        // A waiting magic-link sign-in holds the client's one sign-in slot and its port.
        SignInReply *waiting = client.signInWithMagicLink(QStringLiteral("deleted@example.com"));
        QVERIFY(!Emulator::outboxLink(QStringLiteral("deleted@example.com"), QStringLiteral("link")).isEmpty());
        QSignalSpy never(waiting, &Reply::finished);
        delete waiting;
        // The cancel takes: the slot is free again, and the deleted reply got nothing. It
        // lands on a library thread; until then a new sign-in is refused as in progress, each
        // refusal coming back through the queue: so this waits on the event loop, not a timer.
        SignInReply *next = nullptr;
        for (int attempt = 0; attempt < 10000; attempt++) {
            next = client.signInWithGoogle(600000);
            QVERIFY(finished(next));
            if (next->error() != PORTAL_AUTH_E_SIGN_IN_IN_PROGRESS) break;
            delete next;
        }
        QCOMPARE(next->reason(), PORTAL_AUTH_REASON_NO_BROWSER);
        QCOMPARE(changes.count(), 0);
    }

    void destroyingTheClientInFlightLosesNothing() {
        const Options options = newEnvironment(QStringLiteral("qt-destroyed"));
        auto *client = new Client(options);
        QPointer<Reply> methods = client->getMethods();
        QPointer<Reply> waiting = client->signInWithMagicLink(QStringLiteral("destroyed@example.com"));
        QVERIFY(!Emulator::outboxLink(QStringLiteral("destroyed@example.com"), QStringLiteral("link")).isEmpty());
        delete client;
        QVERIFY(methods.isNull() && waiting.isNull());  // children of the client
        // The port is free again at once: another client's sign-in listens on it.
        Client next(options);
        SignInReply *reply = next.signInWithMagicLink(QStringLiteral("next@example.com"));
        QVERIFY(Emulator::browse(QUrl(Emulator::outboxLink(QStringLiteral("next@example.com"), QStringLiteral("emailLink")))));
        QVERIFY(finished(reply));
        QCOMPARE(reply->error(), PORTAL_AUTH_OK);
        QVERIFY(reply->isSignedIn());
    }

    void twoClientsOnTwoThreadsGetEachTheirOwnCompletions() {
        constexpr int calls = 40;
        const Options options = newEnvironment(QStringLiteral("qt-threads"));
        std::atomic<int> elsewhere{0}, done{0};
        // Counts each reply's finish, and whether it came in the thread of its client.
        const auto watch = [&](Reply *reply, QThread *owner) {
            QObject::connect(reply, &Reply::finished, reply, [&, reply, owner] {
                if (QThread::currentThread() != owner) elsewhere++;
                if (reply->error() == PORTAL_AUTH_OK) done++;
            });
        };
        QThread worker;
        worker.start();
        // The worker's client, made and used in its thread.
        Client *theirs = nullptr;
        QObject anchor;
        anchor.moveToThread(&worker);
        QMetaObject::invokeMethod(&anchor, [&] {
            theirs = new Client(options);
            for (int index = 0; index < calls; index++) watch(theirs->getMethods(), &worker);
        }, Qt::BlockingQueuedConnection);
        Client mine(options);
        for (int index = 0; index < calls; index++) watch(mine.getMethods(), QThread::currentThread());
        QTRY_COMPARE_WITH_TIMEOUT(done.load(), 2 * calls, patience);
        QCOMPARE(elsewhere.load(), 0);
        QMetaObject::invokeMethod(&anchor, [&] { delete theirs; }, Qt::BlockingQueuedConnection);
        worker.quit();
        worker.wait();
    }

    void aForwardedRedirectSignsInTheListeningClient() {
        const Options options = newEnvironment(QStringLiteral("qt-forwarded"));
        Client client(options);
        QSignalSpy changes(&client, &Client::sessionChanged);
        Reply *listening = client.listenForRedirects();
        const QUrl url = Emulator::grantRedirect(options.redirectUrl, options.authEnvironmentId, QStringLiteral("forwarded@example.com"));
        // The next instance, as the URL handler runs it: blocking, on a thread of its own here
        // so that this thread's loop keeps running the client's queue.
        std::atomic<int> result{-1};
        std::thread handler([&] { result = static_cast<int>(Client::forwardRedirect(options, url)); });
        QVERIFY(changes.wait(patience));
        handler.join();
        QCOMPARE(result.load(), static_cast<int>(ForwardResult::Taken));
        QVERIFY(client.isSignedIn());
        QSignalSpy ended(listening, &Reply::finished);
        listening->abort();
        QVERIFY(ended.wait(patience));
        QCOMPARE(listening->error(), PORTAL_AUTH_E_SIGN_IN_CLOSED);
        QCOMPARE(listening->reason(), PORTAL_AUTH_REASON_SIGN_IN_CANCELLED);
        // No instance listens now: the handler is told to handle it itself.
        QCOMPARE(Client::forwardRedirect(options, url), ForwardResult::NoInstance);
    }

    void codesAreNormalizedApartFromTheCall() {
        QCOMPARE(TotpStep::normalizedCode(QStringLiteral("123 456")), QStringLiteral("123456"));
        QCOMPARE(TotpStep::normalizedCode(QStringLiteral("123-456")), QStringLiteral("123456"));
        QVERIFY(TotpStep::normalizedCode(QStringLiteral("12345")).isEmpty());
        QVERIFY(TotpStep::normalizedCode(QStringLiteral("abcdef")).isEmpty());
    }
};

QTEST_MAIN(ClientTest)
#include "tst_client.moc"
