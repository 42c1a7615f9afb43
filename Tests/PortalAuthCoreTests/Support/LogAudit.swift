import Foundation
@testable import PortalAuthCore

/// The tests' one log handler. With PORTAL_AUTH_TEST_LOG_FILE set, every line the library logs
/// is appended there as `swift<TAB>level<TAB>message` (scripts/log-audit.py checks the whole
/// run's lines for the secrets the emulators issued); a test that looks at lines itself
/// listens here instead of replacing the process-wide handler, which would hide the lines
/// of the tests running beside it.
enum LogAudit {
    private static let listeners = Locked<(next: Int, handlers: [Int: PortalAuthLog.Handler])>((0, [:]))

    /// Evaluated by the fixtures every test that can log goes through (Emulator.start, makeClient).
    static let installed: Void = {
        let path = ProcessInfo.processInfo.environment["PORTAL_AUTH_TEST_LOG_FILE"]
        let file = path.map { open($0, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600) } ?? -1
        PortalAuthLog.setHandler { level, line in
            if file >= 0 {
                let record = Array("swift\t\(level)\t\(line)\n".utf8)
                _ = record.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
            }
            for handler in listeners.withLock({ Array($0.handlers.values) }) {
                handler(level, line)
            }
        }
    }()

    /// Runs `body` while `handler` also receives every log line.
    static func listening<T>(
        _ handler: @escaping PortalAuthLog.Handler, _ body: () async throws -> T
    ) async rethrows -> T {
        installed
        let id = listeners.withLock { state in
            defer { state.next += 1 }
            state.handlers[state.next] = handler
            return state.next
        }
        defer { _ = listeners.withLock { $0.handlers.removeValue(forKey: id) } }
        return try await body()
    }
}
