import Foundation
@testable import SvcAttribution

/// A lock around a value, for the fakes' records. Test code only: the SDK itself uses actors.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withValue { $0 } }
}

/// The error a failing fake throws.
struct FakeFailure: Error, Equatable {
    let what: String
}

/// Storage in memory, shared across launches like a device's; its reads, writes or both may fail.
final class MemoryStorage: SvcStorage, @unchecked Sendable {
    enum Failing: Sendable { case none, reads, writes, all }

    let values: Locked<[String: String]>
    let failing: Failing

    init(_ values: [String: String] = [:], failing: Failing = .none) {
        self.values = Locked(values)
        self.failing = failing
    }

    func string(forKey key: String) throws -> String? {
        if failing == .reads || failing == .all { throw FakeFailure(what: "storage unavailable") }
        return values.withValue { $0[key] }
    }

    func set(_ value: String, forKey key: String) throws {
        if failing == .writes || failing == .all { throw FakeFailure(what: "storage unavailable") }
        values.withValue { $0[key] = value }
    }
}

/// A clipboard holding `text` (or failing), that counts its reads.
struct FakeClipboard: SvcClipboard {
    enum Content: Sendable {
        case text(String)
        case empty
        case failing
        /// A read that waits for the user (the paste prompt) and never ends.
        case promptLeftOpen
    }

    let content: Content
    let reads = Locked(0)

    init(_ content: Content) {
        self.content = content
    }

    func hasStrings() async -> Bool {
        if case .empty = content { return false }
        return true
    }

    func string() async throws -> String? {
        reads.withValue { $0 += 1 }
        switch content {
        case .text(let text): return text
        case .empty: return nil
        case .failing: throw FakeFailure(what: "clipboard unavailable")
        case .promptLeftOpen:
            try await Task.sleep(nanoseconds: aDay)
            return nil
        }
    }
}

/// Every message the SDK logged, and the errors that came with them.
final class LogRecorder: Sendable {
    let entries = Locked<[(message: String, error: (any Error)?)]>([])

    var handler: SvcLogHandler {
        { [entries] message, error in entries.withValue { $0.append((message, error)) } }
    }

    var messages: [String] { entries.current.map(\.message) }

    func clear() {
        entries.withValue { $0.removeAll() }
    }
}

/// One request the SDK made, as the fake transport saw it.
struct SentRequest: Sendable {
    let url: URL
    let body: Data

    var path: String { url.path }
    var json: Json { (try? Json.parse(body)) ?? .null }
}

/// A transport that answers from a closure and records every request.
struct FakeTransport: HTTPTransport {
    let sent = Locked<[SentRequest]>([])
    let answer: @Sendable (SentRequest) async throws -> HTTPAnswer

    init(answer: @escaping @Sendable (SentRequest) async throws -> HTTPAnswer) {
        self.answer = answer
    }

    /// Answers every request with `status` and `body`.
    init(status: Int, body: String = #"{"ok":true,"duplicate":false}"#) {
        self.init { _ in HTTPAnswer(status: status, body: Data(body.utf8)) }
    }

    func post(_ url: URL, json: Data) async throws -> HTTPAnswer {
        let request = SentRequest(url: url, body: json)
        sent.withValue { $0.append(request) }
        return try await answer(request)
    }

    var requests: [SentRequest] { sent.current }
}

/// A test's clock for the SDK's time limits: the waits it is told to end, end at once; every
/// other wait lasts until its task is cancelled. Records every wait asked for, in nanoseconds.
final class TestClock: Sendable {
    let asked = Locked<[UInt64]>([])
    private let elapsing: Set<UInt64>

    /// A clock on which the waits of `seconds` end at once.
    init(elapsing seconds: Set<Double> = []) {
        elapsing = Set(seconds.map { UInt64($0 * 1_000_000_000) })
    }

    var sleep: Sleep {
        { [asked, elapsing] nanoseconds in
            asked.withValue { $0.append(nanoseconds) }
            if !elapsing.contains(nanoseconds) { try await Task.sleep(nanoseconds: aDay) }
        }
    }
}

/// Longer than any test: a wait that lasts until its task is cancelled.
let aDay: UInt64 = 86_400 * 1_000_000_000

/// A sleep that waits until its task is cancelled, so a time limit never passes.
let neverElapses: Sleep = { _ in try await Task.sleep(nanoseconds: aDay) }

/// The service's answer to a new install, unattributed.
func installAnswer(_ installID: String, method: String = "unattributed") -> String {
    #"{"ok":true,"duplicate":false,"install":{"install_id":"\#(installID)","platform":"ios","attributed":false,"resolution_method":"\#(method)","confidence":0,"link":null,"code":null,"creator":null}}"#
}

/// A client as the public API makes one, over fakes.
func makeClient(storage: MemoryStorage = MemoryStorage(), clipboard: FakeClipboard? = nil, transport: FakeTransport,
                sleep: @escaping Sleep = neverElapses, log: LogRecorder = LogRecorder(), pixelKey: String = "pk_test",
                endpoint: String = "https://svc.test") -> SvcClient {
    SvcClient(pixelKey: pixelKey, endpoint: URL(string: endpoint), sandbox: false, platform: "ios", appVersion: "1.0",
              storage: storage, clipboard: clipboard, transport: transport, sleep: sleep, log: log.handler)
}
