import Foundation
@testable import PortalAuthCore

/// The library's log lines while a test runs (through `LogAudit`), and a wait for one: how
/// a test learns that something happened on a library thread, such as the loopback listener
/// refusing a request a browser made.
final class LogLines: Sendable {
    private struct Waiter {
        let matches: @Sendable (String) -> Bool
        let continuation: CheckedContinuation<String?, Never>
    }

    private struct State {
        var lines: [String] = []
        var waiters: [Int: Waiter] = [:]
        var nextId = 0
    }

    private let state = Locked(State())

    /// Runs `body` while recording every line.
    static func recording<T>(_ body: (LogLines) async throws -> T) async rethrows -> T {
        let lines = LogLines()
        return try await LogAudit.listening({ _, line in lines.record(line) }) { try await body(lines) }
    }

    private func record(_ line: String) {
        let ready = state.withLock { state -> [CheckedContinuation<String?, Never>] in
            state.lines.append(line)
            let matched = state.waiters.filter { $0.value.matches(line) }
            matched.keys.forEach { state.waiters.removeValue(forKey: $0) }
            return matched.values.map(\.continuation)
        }
        ready.forEach { $0.resume(returning: line) }
    }

    var all: [String] { state.withLock { $0.lines } }

    /// The first line from the `from`th on (so far or from now on) that `matches`; nil when
    /// none has come within `patience` (a bound for a broken run, never a wait for success).
    func first(from start: Int = 0, patience: Duration = .seconds(60),
               where matches: @escaping @Sendable (String) -> Bool) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let id = state.withLock { state -> Int? in
                guard !state.lines.dropFirst(start).contains(where: matches) else { return nil }
                defer { state.nextId += 1 }
                state.waiters[state.nextId] = Waiter(matches: matches, continuation: continuation)
                return state.nextId
            }
            guard let id else { return continuation.resume(returning: state.withLock { $0.lines.dropFirst(start).first(where: matches) }) }
            let seconds = Double(patience.components.seconds)
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
            }
        }
    }
}
