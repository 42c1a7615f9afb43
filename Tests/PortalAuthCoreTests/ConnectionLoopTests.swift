import Foundation
import Testing
@testable import PortalAuthCore

/// The wait that both local listeners run (docs/desktop.md "Browser sign-in"), run on a
/// thread of its own (it blocks) over connections to a fresh loopback port.
@Suite struct ConnectionLoopTests {
    /// A loop whose messages end at a line feed, and its port.
    private func loop(readTimeout: Duration) async throws -> (ConnectionLoop, UInt16) {
        let wake = try #require(WakeSignal())
        let (sockets, port) = try await LoopbackClient.onFreePort { port in
            (try ListenerSockets.open(for: try #require(LoopbackRedirect("http://127.0.0.1:\(port)/"))), port)
        }
        let loop = ConnectionLoop(
            sockets: sockets, wake: wake,
            limits: .init(maxMessage: 64, readTimeout: readTimeout, maxConnections: 4),
            frameEnd: { bytes, _ in bytes.firstIndex(of: UInt8(ascii: "\n")) })
        return (loop, port)
    }

    /// A loop that falls behind (here: one message handled slowly, on a busy machine: the
    /// scheduler) reads what arrived while it was away before it drops anyone for lateness.
    @Test func aMessageThatArrivedWhileTheLoopWasBusyIsReadThoughItsDeadlinePassed() async throws {
        // A whole second: the loop itself must not stall that long between accepting the
        // connections and reading the first message, or the other would expire unread there.
        let readTimeout = Duration.seconds(1)
        let (loop, port) = try await loop(readTimeout: readTimeout)
        defer { ListenerSockets.close(loop.sockets) }
        let late = try LoopbackClient.connect(port)
        defer { close(late) }
        let slow = try LoopbackClient.connect(port)
        defer { close(slow) }
        LoopbackClient.send(Array("slow\n".utf8), on: slow)

        let outcome = try await LoopbackClient.offThePool {
            loop.run(until: .now.advanced(by: .seconds(10)), message: { _, message in
                let text = String(decoding: message, as: UTF8.self)
                guard text == "slow" else { return .end(text) }
                // While this one is handled, the other's message arrives, and its read deadline
                // (counted from its accept, before this message was read) passes.
                LoopbackClient.send(Array("late\n".utf8), on: late)
                Thread.sleep(forTimeInterval: readTimeout / .seconds(1))
                return .next
            }, tooLarge: { _ in }, ended: { "ended: \($0)" })
        }
        #expect(outcome == "late")
    }
}
