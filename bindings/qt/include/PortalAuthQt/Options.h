// What a PortalAuthQt::Client is made from: portal_auth_options (portal_auth.h), in Qt types.
#pragma once

#include <QString>

namespace PortalAuthQt {

// Where the session is kept (PORTAL_AUTH_STORAGE_*): the desktop keyring by default.
enum class Storage { Keyring, Memory, File };

struct Options {
    // The auth environment's id. Required.
    QString authEnvironmentId;
    // The redirect URL Portal sends the user back to. Required. A loopback URL with a port
    // (http://127.0.0.1:8765/callback) for the browser and in-app magic-link sign-ins.
    QString redirectUrl;
    // The API host; empty: api.portalhq.io.
    QString apiHost;
    // The magic-link sender and template; both empty: no magic links.
    QString magicLinkFromEmail;
    QString magicLinkTemplateId;
    // The application's reverse-DNS name ("com.example.App"): its own keyring item and its
    // redirect channel. Empty: QGuiApplication::desktopFileName().
    QString applicationId;
    Storage storage = Storage::Keyring;
    // With Storage::File: the folder of the session files; empty: the library's default.
    QString fileStoragePath;
    // Zero or less: the library's defaults (10 s, 30 s; the keyring's dialogs never shown).
    int connectTimeoutMs = 0;
    int requestTimeoutMs = 0;
    int keyringPromptTimeoutMs = 0;
    // A PEM file of the certificate authorities to trust in place of the system's (a
    // company's own CA); one that is not a readable file leaves the client invalid. Empty:
    // $CURL_CA_BUNDLE, else $SSL_CERT_FILE and $SSL_CERT_DIR, else the system's.
    QString caFile;
};

}  // namespace PortalAuthQt
