import Foundation
@testable import PortalAuthCore

/// A running Portal emulator (the repository's emulator/ package) on loopback, and its
/// control endpoints. It exits when its stdin closes, so it never outlives the tests.
final class Emulator: Sendable {
    let baseURL: String
    let apiHost: String
    /// Stops when its standard input closes (`--stop-on-stdin-eof`).
    private let process: RunningProgram

    /// One emulator for the tests that do not inject faults or count requests globally.
    static let shared = SharedEmulator()

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Starts an emulator and waits for its "listening" line, on a thread of its own: the
    /// tests run in parallel on the cooperative pool (one thread a core), and a pool thread
    /// blocked while Python starts would stall every other test's tasks, listeners included.
    static func start(config: String? = nil, arguments extra: [String] = []) async throws -> Emulator {
        try await LoopbackClient.offThePool { try startBlocking(config: config, arguments: extra) }
    }

    /// As `start`, blocking the calling thread until the emulator listens.
    private static func startBlocking(config: String? = nil, arguments extra: [String] = []) throws -> Emulator {
        LogAudit.installed
        var arguments = ["python3", "-m", "portal_auth_emulator", "--port", "0", "--stop-on-stdin-eof"]
        if let config {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-\(UUID().uuidString).json")
            try config.write(to: file, atomically: true, encoding: .utf8)
            arguments += ["--config", file.path]
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = repositoryRoot.appendingPathComponent("emulator").path
        let process = try RunningProgram.spawn("/usr/bin/env", arguments + extra, environment: environment, input: .pipe)

        // The first line names the port: reading it is how we wait for readiness.
        let line = process.readLine()
        guard let range = line.range(of: "http://127.0.0.1:") ?? line.range(of: "https://127.0.0.1:") else {
            throw EmulatorError.exited
        }
        let url = String(line[range.lowerBound...].prefix { !$0.isWhitespace })
        return Emulator(baseURL: url, process: process)
    }

    private init(baseURL: String, process: RunningProgram) {
        self.baseURL = baseURL
        self.apiHost = baseURL
        self.process = process
    }

    deinit { stop() }

    func stop() {
        process.closeInput()
        process.terminate()
        process.wait()
    }

    // MARK: - Control endpoints

    @discardableResult
    func request(_ method: HTTPRequest.Method, _ path: String, json: Any? = nil) async throws -> Any {
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) }
        let response = try await HTTPEngine.shared.send(HTTPRequest(
            method: method, url: baseURL + path, headers: ["Content-Type: application/json"],
            body: body, origin: baseURL + "/control"))
        guard (200..<300).contains(response.status) else {
            throw EmulatorError.status(response.status, String(decoding: response.body, as: UTF8.self))
        }
        return try JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])
    }

    /// The links of the magic-link emails sent to `email`, oldest first.
    func outbox(_ email: String) async throws -> [String] {
        let answer = try await request(.get, "/_emulator/outbox?email=\(QueryEncoding.encode(email))") as? [String: Any]
        let messages = answer?["messages"] as? [[String: Any]] ?? []
        return messages.compactMap { $0["link"] as? String }
    }

    /// One magic-link email: `link`, the redirect URL with its grant, and `emailLink`, what
    /// its button opens (the emulator's page, which sends the browser on to `link`).
    struct Mail: Sendable {
        let link: String
        let emailLink: String
    }

    /// The emails sent to `email`, oldest first, once `count` of them have been (the
    /// emulator waits for them, as a user waits for their mail).
    func mail(to email: String, count: Int = 1) async throws -> [Mail] {
        let answer = try await request(.get, "/_emulator/outbox?email=\(QueryEncoding.encode(email))&count=\(count)&timeout=30") as? [String: Any]
        let messages = answer?["messages"] as? [[String: Any]] ?? []
        return messages.compactMap { message in
            guard let link = message["link"] as? String, let emailLink = message["emailLink"] as? String else { return nil }
            return Mail(link: link, emailLink: emailLink)
        }
    }

    /// The recorded Portal API requests, optionally only those for `path` (e.g. "/methods").
    func requests(_ path: String? = nil) async throws -> [RecordedRequest] {
        let answer = try await request(.get, "/_emulator/requests") as? [String: Any]
        let all = (answer?["requests"] as? [[String: Any]] ?? []).map(RecordedRequest.init)
        guard let path else { return all }
        return all.filter { $0.path == BaseURL.apiPrefix + path }
    }

    /// Queues a fault for the next requests to `path` (e.g. "/methods").
    func fault(_ path: String, _ kind: String, count: Int = 1, _ extra: [String: Any] = [:]) async throws {
        var rule: [String: Any] = ["path": BaseURL.apiPrefix + path, "kind": kind, "count": count]
        rule.merge(extra) { $1 }
        try await request(.post, "/_emulator/faults", json: rule)
    }

    /// Returns once `count` requests to `path` have arrived (the emulator blocks until then).
    func waitForRequests(_ path: String, count: Int = 1) async throws {
        try await request(.get, "/_emulator/wait?path=\(QueryEncoding.encode(BaseURL.apiPrefix + path))&count=\(count)&timeout=30")
    }

    /// Lets held responses go.
    func release() async throws {
        try await request(.post, "/_emulator/release")
    }

    /// A fresh single-use grant, without the email round trip.
    func grant(environment: String, email: String, kind: String = "magic") async throws -> String {
        let answer = try await request(.post, "/_emulator/grants",
                                       json: ["environmentId": environment, "email": email, "kind": kind]) as? [String: Any]
        guard let token = answer?["token"] as? String else { throw EmulatorError.exited }
        return token
    }

    func control(_ settings: [String: Any]) async throws {
        try await request(.post, "/_emulator/control", json: settings)
    }

    /// Adds or replaces an environment (same shape as in the emulator's config).
    func addEnvironment(_ environment: [String: Any]) async throws {
        try await request(.post, "/_emulator/environments", json: environment)
    }
}

struct RecordedRequest: Sendable {
    let method: String
    let path: String
    let query: String
    let headers: [String: String]
    let body: String
    /// The client's port: requests with one port came over one connection.
    let peerPort: Int
    /// It reached the emulator as a proxy request.
    let proxied: Bool

    init(_ json: [String: Any]) {
        method = json["method"] as? String ?? ""
        path = json["path"] as? String ?? ""
        query = json["query"] as? String ?? ""
        headers = json["headers"] as? [String: String] ?? [:]
        body = json["body"] as? String ?? ""
        peerPort = json["peerPort"] as? Int ?? 0
        proxied = json["proxied"] as? Bool ?? false
    }

    var jsonBody: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}

enum EmulatorError: Error {
    case exited
    case status(Int, String)
}

/// The shared emulator, started on first use, off the cooperative pool as `Emulator.start`
/// says why: the tests that want it at once wait for it suspended, not blocking a pool
/// thread each.
final class SharedEmulator: Sendable {
    private let starting = Locked<Task<Emulator, any Error>?>(nil)

    func get() async throws -> Emulator {
        let start = starting.withLock { slot in
            if let started = slot { return started }
            let first = Task { try await Emulator.start() }
            slot = first
            return first
        }
        return try await start.value
    }
}
