import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import SvcAttribution

/// The SDK over real HTTP: URLSession against a server on 127.0.0.1 made by the test.
@Suite("over HTTP")
struct HTTPTests {
    @Test("URLSession's transport posts JSON and hands back the status and body")
    func transportPosts() async throws {
        let server = try LoopbackServer { _ in .answer(status: 201, body: #"{"ok":true}"#) }
        defer { server.stop() }
        let answer = try await URLSessionTransport.shared.post(server.url.appendingPathComponent("x"), json: Data(#"{"a":1}"#.utf8))
        #expect(answer.status == 201)
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"ok":true}"#)
        #expect(server.requests.map(\.method) == ["POST"])
        #expect(server.requests.first?.json == .object(["a": .number(1)]))
    }

    @Test("URLSession's own time limit ends a request the server never answers")
    func transportTimesOut() async throws {
        let server = try LoopbackServer { _ in .silence }
        defer { server.stop() }
        let transport = URLSessionTransport(timeout: 1)
        await #expect(throws: URLError.self) {
            _ = try await transport.post(server.url, json: Data("{}".utf8))
        }
        #expect(server.requests.count == 1)
    }

    @Test("a server that never answers: given up at the SDK's limit, the connection closed, the install kept for later")
    func silentServer() async throws {
        let server = try LoopbackServer { _ in .silence }
        defer { server.stop() }
        let storage = MemoryStorage()
        let log = LogRecorder()
        // The test's clock ends the 10 s wait as soon as the request has reached the server.
        let clock: Sleep = { _ in
            while server.requests.isEmpty { try await Task.sleep(nanoseconds: 5_000_000) }
        }
        let client = SvcClient(pixelKey: FakeService.pixelKey, endpoint: server.url, sandbox: false, platform: "ios", appVersion: nil,
                               storage: storage, clipboard: nil, transport: URLSessionTransport.shared, sleep: clock, log: log.handler)
        #expect(await client.trackInstall() == nil)
        #expect(log.messages.contains("svc: /api/public/attribution/installs: no answer in 10 s; kept for a later launch"))
        #expect(storage.values.current["svc_pending_install"] != nil)
        for _ in 0..<200 where server.closedByClient == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(server.closedByClient == 1)
    }

    @Test("a refused connection and a 5xx keep the install and the purchase; the next launch sends both once")
    func refusedThen5xxThenOnline() async throws {
        let service = FakeService()
        let server = try LoopbackServer { service.reply(to: $0) }
        defer { server.stop() }
        let storage = MemoryStorage()
        let log = LogRecorder()
        let refusing = try RefusingPort()
        defer { refusing.close() }

        let offline = Svc.makeClient(pixelKey: FakeService.pixelKey, endpoint: refusing.url, storage: storage, clipboard: nil, log: log.handler)
        #expect(await offline.trackInstall(code: FakeService.code) == nil)
        #expect(await offline.trackPurchase(transactionID: "apple:1", amount: 4.99, currency: "USD") == false)
        let refusal = try #require(log.entries.current.first { $0.message.hasSuffix("network error; kept for a later launch") })
        #expect((refusal.error as? URLError)?.code == .cannotConnectToHost)

        service.outage.withValue { $0 = 503 }
        let outage = Svc.makeClient(pixelKey: FakeService.pixelKey, endpoint: server.url, storage: storage, clipboard: nil, log: log.handler)
        #expect(await outage.trackInstall() == nil)
        #expect(log.messages.contains("svc: /api/public/attribution/installs: HTTP 503; kept for a later launch"))

        service.outage.withValue { $0 = nil }
        let online = Svc.makeClient(pixelKey: FakeService.pixelKey, endpoint: server.url, storage: storage, clipboard: nil, log: log.handler)
        let answer = await online.trackInstall()
        #expect(answer?.install.resolutionMethod == .code)
        #expect(answer?.install.code == FakeService.code)
        let sent = server.requests.filter { $0.json != .null }
        #expect(sent.map(\.path) == ["/api/public/attribution/installs", "/api/public/attribution/installs", "/api/public/attribution/events"])
        #expect(sent[0].json["occurred_at"] == sent[1].json["occurred_at"])
        #expect(sent[2].json["amount"] == .number(4.99))
        #expect(storage.values.current["svc_pending_purchases"] == "[]")
    }
}

/// An app driving the public API only, over real HTTP, against a service that answers as SPEC 4.2 says.
@Suite("an app against the service")
struct AppTests {
    let service = FakeService()
    let server: LoopbackServer

    init() throws {
        let service = service
        server = try LoopbackServer { service.reply(to: $0) }
    }

    func launch(_ storage: MemoryStorage, clipboard: FakeClipboard? = nil, pixelKey: String = FakeService.pixelKey, log: LogRecorder = LogRecorder()) -> SvcClient {
        Svc.makeClient(pixelKey: pixelKey, endpoint: server.url, storage: storage, clipboard: clipboard, log: log.handler)
    }

    @Test("first launch credited by clipboard, reported once across launches; a purchase inherits it and a retry is a duplicate")
    func clipboardInstallThenPurchases() async {
        defer { server.stop() }
        let storage = MemoryStorage()
        let clipboard = FakeClipboard(.text(" \(FakeService.clickToken)\n"))
        let first = await launch(storage, clipboard: clipboard).trackInstall(readClipboard: true)
        #expect(first?.install.resolutionMethod == .clipboard)
        #expect(first?.install.link == InstallAnswer.Link(id: 42, domain: "maya.link", slug: "app"))
        #expect(first?.install.confidence == 0.95)
        let second = launch(storage, clipboard: clipboard)
        #expect(await second.trackInstall(readClipboard: true) == nil)
        #expect(await second.trackPurchase(transactionID: "apple:2000000123456789", amount: 4.99, currency: "USD"))
        #expect(await second.trackPurchase(transactionID: "apple:2000000123456789", amount: 4.99, currency: "USD"))
        #expect(clipboard.reads.current == 1)
        #expect(server.requests.map(\.path) == ["/api/public/attribution/installs", "/api/public/attribution/events", "/api/public/attribution/events"])
        let purchase = server.requests[1].json
        #expect(purchase["external_user_id"]?.string == first?.install.installID)
        #expect(purchase["source"] == .string("sdk"))
    }

    @Test("clipboard reading off, or a clipboard holding other text: no token sent, nothing of it logged")
    func clipboardOffOrOtherText() async {
        defer { server.stop() }
        let token = FakeClipboard(.text(FakeService.clickToken))
        #expect(await launch(MemoryStorage(), clipboard: token).trackInstall(readClipboard: false)?.install.resolutionMethod == .unattributed)
        #expect(token.reads.current == 0)
        let log = LogRecorder()
        let private_ = FakeClipboard(.text("svc_7Hq2mXw9 and my card 4111 1111"))
        #expect(await launch(MemoryStorage(), clipboard: private_, log: log).trackInstall(readClipboard: true)?.install.resolutionMethod == .unattributed)
        #expect(private_.reads.current == 1)
        #expect(server.requests.allSatisfy { $0.json["clipboard_token"] == nil })
        #expect(!log.messages.contains { $0.contains("4111") })
    }

    @Test("a code credits the install; a wrong pixel key is refused once and never sent again; a refused purchase is not queued")
    func codesAndRefusals() async {
        defer { server.stop() }
        #expect(await launch(MemoryStorage()).trackInstall(code: " \(FakeService.code) ")?.install.resolutionMethod == .code)
        let wrongKey = MemoryStorage()
        #expect(await launch(wrongKey, pixelKey: "pk_wrong").trackInstall() == nil)
        #expect(await launch(wrongKey, pixelKey: "pk_wrong").trackInstall() == nil)
        #expect(server.requests.count == 2)
        let storage = MemoryStorage()
        let client = launch(storage)
        #expect(await client.trackPurchase(transactionID: "tx-negative", amount: -5, currency: "USD") == false)
        #expect(storage.values.current["svc_pending_purchases"] == nil)
    }
}
