import Foundation
import Testing
@testable import SvcAttribution

/// The language-neutral behaviour cases of sdk/vectors (format: sdk/vectors/README.md), run
/// through the client's public calls with a scripted transport, storage, clipboard and log.
/// Only the configuration goes through an internal initializer, for the cases that name
/// `android` or an app version (the public API always sends `ios` and the bundle's version).
@Suite("sdk/vectors")
struct VectorTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../../vectors").standardized

    static let cases: [Vector] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.sorted().compactMap { file in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(file).path) else { return nil }
            return try? JSONDecoder().decode(Vector.self, from: data)
        }
    }()

    @Test("finds every case: at least 20, each named after its file and listed in the README")
    func findsTheCases() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).filter { $0.hasSuffix(".json") }
        #expect(Self.cases.count >= 20)
        #expect(Self.cases.count == files.count, "a case file that does not decode")
        let readme = try String(contentsOf: Self.directory.appendingPathComponent("README.md"), encoding: .utf8)
        for vector in Self.cases {
            #expect(files.contains("\(vector.name).json"))
            #expect(readme.contains("`\(vector.name)`"))
        }
    }

    @Test("runs", arguments: cases)
    func runs(_ vector: Vector) async {
        let problems = await VectorRun(vector).problems()
        #expect(problems.isEmpty, "\(vector.name): \(vector.description)\n\(problems.joined(separator: "\n"))")
    }

    @Test("the comparison finds a wrong value, a missing and an extra key, and a placeholder bound to another value")
    func comparisonFindsDifferences() throws {
        var bindings: Bindings = [:]
        let expected = try Json.parse(#"{"id":"{{uuid:install}}","amount":4.99,"code":"MAYA"}"#)
        let first = try Json.parse(#"{"id":"0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a","amount":4.99,"code":"MAYA"}"#)
        #expect(differences(expected: expected, actual: first, at: "body", bindings: &bindings).isEmpty)
        let second = try Json.parse(#"{"id":"1b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a","amount":4.990000000000001,"extra":true}"#)
        let found = differences(expected: expected, actual: second, at: "body", bindings: &bindings)
        #expect(found.count == 4)
        #expect(found.contains { $0.hasPrefix("body.amount: expected 4.99") })
        #expect(found.contains("body.code: missing"))
        #expect(found.contains { $0.hasPrefix("body.extra: not expected") })
        #expect(found.contains { $0.hasPrefix("body.id: {{uuid:install}} was 0b7c6a3e") })
        #expect(!isLowercaseUUIDv4("0B7C6A3E-5D4F-4E2A-9C1B-7F8E6D5C4B3A"))
        #expect(differences(expected: .bool(true), actual: .number(1), at: "x", bindings: &bindings) == ["x: expected true, got 1"])
    }
}

/// One case of sdk/vectors.
struct Vector: Decodable, Sendable, CustomTestStringConvertible {
    struct Config: Decodable, Sendable {
        let pixelKey: String
        let platform: String
        let appVersion: String?
        let endpoint: String
        let sandbox: Bool?
    }

    struct StorageSpec: Decodable, Sendable {
        let fails: Json?
        let before: [String: Json]
        let after: [String: Json]
    }

    struct Call: Decodable, Sendable {
        let call: String
        let args: Json?
        let concurrent: Int?
        let requests: [ExpectedRequest]
        let result: Json
        let logged: Bool?
    }

    struct ExpectedRequest: Decodable, Sendable {
        let method: String
        let path: String
        let body: Json
        let answer: Json
    }

    let name: String
    let description: String
    let config: Config
    let clipboard: Json?
    let storage: StorageSpec
    let launches: [[Call]]
    let clipboardReads: Int?

    enum CodingKeys: String, CodingKey {
        case name, description, config, clipboard, storage, launches
        case clipboardReads = "clipboard_reads"
    }

    var testDescription: String { name }
}

/// Runs one vector and collects every difference from what it expects.
final class VectorRun: Sendable {
    let vector: Vector
    let storage: MemoryStorage
    let clipboard: FakeClipboard?
    private let state = Locked(State())

    struct State {
        var expected: [Vector.ExpectedRequest] = []
        var bindings: Bindings = [:]
        var problems: [String] = []
        var place = ""
    }

    init(_ vector: Vector) {
        self.vector = vector
        let before = vector.storage.before.mapValues { value in value.string ?? value.description }
        let failing: MemoryStorage.Failing = switch vector.storage.fails {
        case .bool(true): .all
        case .string("reads"): .reads
        case .string("writes"): .writes
        default: .none
        }
        storage = MemoryStorage(before, failing: failing)
        clipboard = switch vector.clipboard {
        case .string(let text): FakeClipboard(.text(text))
        case .object: FakeClipboard(.failing)
        default: nil
        }
    }

    func problems() async -> [String] {
        let endpoint = String(vector.config.endpoint.reversed().drop { $0 == "/" }.reversed())
        let transport = FakeTransport { [state] request in
            try state.withValue { state in
                guard !state.expected.isEmpty else {
                    state.problems.append("\(state.place): unexpected request \(request.url) \(request.json)")
                    throw URLError(.notConnectedToInternet)
                }
                let next = state.expected.removeFirst()
                let at = "\(state.place) request \(next.path)"
                if request.url.absoluteString != endpoint + next.path { state.problems.append("\(at): url \(request.url)") }
                state.problems += differences(expected: next.body, actual: request.json, at: "\(at) body", bindings: &state.bindings)
                guard let status = next.answer["status"]?.number else { throw URLError(.networkConnectionLost) }
                return HTTPAnswer(status: Int(status), body: filled(next.answer["body"] ?? .null, state.bindings).data)
            }
        }
        for (launchIndex, launch) in vector.launches.enumerated() {
            let log = LogRecorder()
            let client = SvcClient(
                pixelKey: vector.config.pixelKey, endpoint: URL(string: vector.config.endpoint),
                sandbox: vector.config.sandbox ?? false, platform: vector.config.platform, appVersion: vector.config.appVersion,
                storage: storage, clipboard: clipboard, transport: transport, log: log.handler
            )
            for (callIndex, call) in launch.enumerated() {
                let place = "launch \(launchIndex + 1) call \(callIndex + 1) \(call.call)"
                state.withValue {
                    $0.place = place
                    $0.expected = call.requests
                }
                log.clear()
                let results = await withTaskGroup(of: Json.self) { group in
                    for _ in 0..<(call.concurrent ?? 1) { group.addTask { await Self.invoke(call, on: client) } }
                    return await group.reduce(into: [Json]()) { $0.append($1) }
                }
                state.withValue { state in
                    if !state.expected.isEmpty { state.problems.append("\(place): requests not made: \(state.expected.map(\.path))") }
                    for result in results {
                        state.problems += differences(expected: call.result, actual: result, at: "\(place) result", bindings: &state.bindings)
                    }
                    if let logged = call.logged, logged != !log.messages.isEmpty {
                        state.problems.append("\(place): expected logged \(logged), got \(log.messages)")
                    }
                }
            }
        }
        compareStorageAfter()
        if let reads = vector.clipboardReads, reads != clipboard?.reads.current ?? 0 {
            state.withValue { $0.problems.append("expected \(reads) clipboard reads, got \(clipboard?.reads.current ?? 0)") }
        }
        return state.current.problems
    }

    private static func invoke(_ call: Vector.Call, on client: SvcClient) async -> Json {
        let args = call.args ?? .null
        switch call.call {
        case "trackInstall":
            let answer = await client.trackInstall(readClipboard: args["readClipboard"]?.bool ?? false, code: args["code"]?.string)
            return answer.flatMap { try? Json.of($0) } ?? .null
        case "trackPurchase":
            let amount = args["amount"]?.number.flatMap { Decimal(string: String($0)) } ?? .nan
            return .bool(await client.trackPurchase(transactionID: args["transactionId"]?.string ?? "", amount: amount,
                                                    currency: args["currency"]?.string ?? "", code: args["code"]?.string))
        case "getInstallId":
            return .string(await client.installID())
        default:
            return .string("unknown call \(call.call)")
        }
    }

    /// Storage after the case, compared whole: values written as JSON in the case are parsed.
    private func compareStorageAfter() {
        let stored = storage.values.current
        var after: [String: Json] = [:]
        for (key, value) in stored {
            if let expected = vector.storage.after[key], expected.string == nil {
                after[key] = (try? Json.parse(value)) ?? .string(value)
            } else {
                after[key] = .string(value)
            }
        }
        state.withValue { state in
            state.problems += differences(expected: .object(vector.storage.after), actual: .object(after), at: "storage after", bindings: &state.bindings)
        }
    }
}
