import CPortalAuth
import PortalAuthCore

/// What a portal_auth_methods handle holds during its callback.
final class MethodsBox {
    let names: [OwnedCString]
    let autoCreateWallet: Bool

    init(_ result: AuthMethodsResult) {
        names = result.allowedAuthMethods.map { OwnedCString($0.rawValue) }
        autoCreateWallet = result.autoCreateWallet
    }
}

private typealias MethodsHandle = Handle<MethodsBox, portal_auth_methods>

/// See portal_auth_get_methods in include/portal_auth.h.
@c(portal_auth_get_methods)
public func portalAuthGetMethods(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_methods_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startCall(client, out_call, work: { try await $0.getMethods() }) { outcome in
        switch outcome {
        case .success(let methods):
            let handle = MethodsHandle.make(MethodsBox(methods))
            defer { MethodsHandle.release(handle) }
            done(user.raw, UnsafePointer(handle), nil)
        case .failure(let error):
            withErrorHandle(error) { done(user.raw, nil, $0) }
        }
    }
}

/// See portal_auth_methods_count in include/portal_auth.h.
@c(portal_auth_methods_count)
public func portalAuthMethodsCount(_ methods: UnsafePointer<portal_auth_methods>?) -> UInt {
    UInt(MethodsHandle.object(methods)?.names.count ?? 0)
}

/// See portal_auth_methods_at in include/portal_auth.h.
@c(portal_auth_methods_at)
public func portalAuthMethodsAt(_ methods: UnsafePointer<portal_auth_methods>?, _ index: UInt) -> UnsafePointer<CChar>? {
    guard let names = MethodsHandle.object(methods)?.names, index < UInt(names.count) else { return nil }
    return UnsafePointer(names[Int(index)].pointer)
}

/// See portal_auth_methods_auto_create_wallet in include/portal_auth.h.
@c(portal_auth_methods_auto_create_wallet)
public func portalAuthMethodsAutoCreateWallet(_ methods: UnsafePointer<portal_auth_methods>?) -> portal_auth_bool {
    MethodsHandle.object(methods)?.autoCreateWallet == true ? PORTAL_AUTH_TRUE : PORTAL_AUTH_FALSE
}

/// See portal_auth_send_magic_link in include/portal_auth.h.
@c(portal_auth_send_magic_link)
public func portalAuthSendMagicLink(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ email: UnsafePointer<CChar>?,
    _ done: portal_auth_done_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    guard let done, let address = try? CText.read(email) ?? "" else { return refused(out_call) }
    let user = HostPointer(raw: user_data)
    return startCall(client, out_call, work: { try await $0.sendMagicLink(address) }) { outcome in
        withErrorHandle(outcome.failureValue) { done(user.raw, $0) }
    }
}

/// See portal_auth_login_with_google in include/portal_auth.h.
@c(portal_auth_login_with_google)
public func portalAuthLoginWithGoogle(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_url_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    authorizeUrl(client, done, user_data, out_call) { try await $0.loginWithGoogle() }
}

/// See portal_auth_login_with_apple in include/portal_auth.h.
@c(portal_auth_login_with_apple)
public func portalAuthLoginWithApple(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_url_fn?,
    _ user_data: UnsafeMutableRawPointer?,
    _ out_call: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?
) -> portal_auth_code {
    authorizeUrl(client, done, user_data, out_call) { try await $0.loginWithApple() }
}

private func authorizeUrl(
    _ client: UnsafeMutablePointer<portal_auth>?,
    _ done: portal_auth_url_fn?,
    _ userData: UnsafeMutableRawPointer?,
    _ outCall: UnsafeMutablePointer<UnsafeMutablePointer<portal_auth_call>?>?,
    _ work: @escaping @Sendable (PortalAuth) async throws -> AuthorizeUrlResult
) -> portal_auth_code {
    guard let done else { return refused(outCall) }
    let user = HostPointer(raw: userData)
    return startCall(client, outCall, work: work) { outcome in
        switch outcome {
        case .success(let result):
            result.authorizeUrl.withCString { done(user.raw, $0, nil) }
        case .failure(let error):
            withErrorHandle(error) { done(user.raw, nil, $0) }
        }
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
