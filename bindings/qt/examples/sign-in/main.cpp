// portal-auth-qt's sample app. Replace the environment below with your own (Portal's
// dashboard allow-lists the redirect URL); PORTAL_AUTH_EXAMPLE_* variables override it.
#include "SignInWindow.h"

#include <QApplication>

static QString setting(const char *variable, const char *fallback) {
    const QString value = qEnvironmentVariable(variable);
    return value.isEmpty() ? QString::fromUtf8(fallback) : value;
}

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    QGuiApplication::setDesktopFileName(QStringLiteral("io.portalhq.QtSample"));
    PortalAuthQt::Options options;
    options.authEnvironmentId = setting("PORTAL_AUTH_EXAMPLE_ENVIRONMENT_ID", "your-environment-id");
    options.redirectUrl = setting("PORTAL_AUTH_EXAMPLE_REDIRECT_URL", "http://127.0.0.1:8765/callback");
    options.apiHost = qEnvironmentVariable("PORTAL_AUTH_EXAMPLE_API_HOST");  // empty: api.portalhq.io
    options.magicLinkFromEmail = setting("PORTAL_AUTH_EXAMPLE_FROM_EMAIL", "hello@example.com");
    options.magicLinkTemplateId = setting("PORTAL_AUTH_EXAMPLE_TEMPLATE_ID", "your-template-id");
    SignInWindow window(options);
    window.show();
    return app.exec();
}
