/// The small HTML pages the loopback listener answers with. The browser's tab shows them
/// once the provider sends the user back, so they say where to go next; the only text they
/// take from a request is the redirect's `error`, HTML-escaped. No page ever carries the grant.
enum CallbackPage {
    /// The page of a callback that carries a grant.
    static let received = document(
        title: "Sign-in received", message: "Sign-in received. You can close this window and return to the application.")

    /// The page of a callback that reports the provider's `error`.
    static func failed(_ error: String) -> String {
        document(title: "Sign-in failed",
                 message: "Sign-in failed: \(error). You can close this window and try again from the application.")
    }

    /// The page of a magic-link sign-in that is complete.
    static let signedIn = document(
        title: "Signed in", message: "You are signed in. You can close this window and go back to the application.")

    /// The page of a magic-link sign-in that needs the user's TOTP code.
    static let codeRequired = document(
        title: "One more step",
        message: "Go back to the application and enter the code from your authenticator app to finish signing in.")

    /// The page of a magic-link sign-in whose exchange failed (its error is the application's
    /// to show: the page says only where to go).
    static let notCompleted = document(
        title: "Sign-in not completed",
        message: "The sign-in could not be completed. You can close this window and try again from the application.")

    /// The page of a magic-link sign-in whose exchange failed but left the link usable: the
    /// sign-in still waits for it.
    static let openTheLinkAgain = document(
        title: "Sign-in not finished",
        message: "The sign-in could not finish just now. Open the link in the email again to try once more.")

    /// The page of a browser sign-in whose exchange failed but left the grant unspent: the
    /// sign-in still waits, and reloading brings the same redirect again.
    static let reloadToTryAgain = document(
        title: "Sign-in not finished",
        message: "The sign-in could not finish just now. Reload this page to try once more.")

    /// What the browser is told once a sign-in has completed with `outcome`.
    static func completed(_ outcome: Result<AuthResult?, any Error>) -> String {
        switch outcome {
        case .success(.authenticated?): return signedIn
        case .success(.totpRequired?): return codeRequired
        case .failure(PortalAuthError.authenticationFailed(let error)): return failed(error)
        case .success(nil), .failure: return notCompleted
        }
    }

    /// A page of one paragraph; `message` is escaped here.
    static func document(title: String, message: String) -> String {
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>\(escape(title))</title></head>"
            + "<body><p>\(escape(message))</p></body></html>"
    }

    /// `text` safe inside an element or a quoted attribute.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
