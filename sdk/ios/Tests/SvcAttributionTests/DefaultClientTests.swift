import Foundation
import Testing
@testable import SvcAttribution

/// `Svc`'s default client. The only test that calls `Svc.configure`: the state it sets is the process's.
@Suite("Svc, the default client")
struct DefaultClientTests {
    @Test("before configure: installID() throws, the calls send nothing; after: they use the client configure answered")
    func beforeAndAfterConfigure() async throws {
        await #expect(throws: SvcError.notConfigured) { try await Svc.installID() }
        await #expect(throws: SvcError.notConfigured) { try await Svc.installUUID() }
        #expect(Svc.client == nil)
        #expect(await Svc.trackInstall() == nil)
        #expect(await Svc.trackInstall(pastedText: FakeService.clickToken) == nil)
        #expect(await Svc.trackPurchase(transactionID: "tx", amount: 1, currency: "USD") == false)
        #expect(await Svc.wouldReadClipboard() == false)

        let service = FakeService()
        let server = try LoopbackServer { service.reply(to: $0) }
        defer { server.stop() }
        let storage = MemoryStorage()
        let client = Svc.configure(pixelKey: FakeService.pixelKey, endpoint: server.url, storage: storage,
                                   clipboard: FakeClipboard(.text(FakeService.clickToken)))
        #expect(Svc.client === client)
        let id = try await Svc.installID()
        #expect(isLowercaseUUIDv4(id))
        #expect(try await Svc.installUUID().uuidString.lowercased() == id)
        #expect(storage.values.current["svc_install_id"] == id)
        #expect(await Svc.wouldReadClipboard())
        let answer = await Svc.trackInstall(readClipboard: true)
        #expect(answer?.install.installID == id)
        #expect(answer?.install.resolutionMethod == .clipboard)
        #expect(await Svc.trackPurchase(transactionID: "apple:1", amount: 0.99, currency: "GBP"))
        #expect(server.requests.last?.json["platform"] == nil)
        #expect(server.requests.first?.json["platform"] == .string("ios"))
        #expect(Svc.sdkVersion == "0.1.0")

        let log = LogRecorder()
        let again = Svc.configure(pixelKey: FakeService.pixelKey, endpoint: server.url, storage: storage, clipboard: nil, log: log.handler)
        #expect(Svc.client === again)
        #expect(log.messages == ["svc: configure() called again: the new client replaces the default one; the previous one still finishes what it is sending"])
        #expect(try await Svc.installID() == id)
        #expect(Svc.defaultEndpoint?.scheme?.hasPrefix("http") == true)
    }
}

@Suite("storage and JSON")
struct StorageAndJSONTests {
    @Test("UserDefaultsStorage keeps strings in the suite it names")
    func userDefaultsStorage() throws {
        let suite = "svc-tests-\(UUID().uuidString)"
        defer { UserDefaults().removePersistentDomain(forName: suite) }
        let storage = UserDefaultsStorage(suiteName: suite)
        #expect(try storage.string(forKey: "svc_install_id") == nil)
        try storage.set("0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a", forKey: "svc_install_id")
        #expect(try UserDefaultsStorage(suiteName: suite).string(forKey: "svc_install_id") == "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a")
        #expect(UserDefaults(suiteName: suite)?.string(forKey: "svc_install_id") == "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a")
    }

    @Test("JSON is written compact, with escapes, and read back as written", arguments: [
        #"{"a":"x\"y\\z","b":[1,-2.5,0.000001,1234567.891],"c":{"d":null,"e":true,"f":false},"g":"é😀\n\t\u0001"}"#,
        #"[]"#, #"{}"#, #""""#, #"0"#,
    ])
    func roundTrip(text: String) throws {
        let value = try #require(JSONValue(parsing: text))
        #expect(value.text == text)
        #expect(try Json.parse(value.text) == (try Json.parse(text)))
    }

    @Test("numbers keep their decimal digits both ways")
    func exactNumbers() throws {
        let value = try #require(JSONValue(parsing: " [ 9.99 , 1e2, -0.5E-1 ] "))
        #expect(value == .array([.number(Decimal(string: "9.99") ?? 0), .number(100), .number(Decimal(string: "-0.05") ?? 0)]))
        #expect(value.text == "[9.99,100,-0.05]")
    }

    @Test("anything but one JSON value is refused", arguments: [
        "", "{", "[1,]", #"{"a"}"#, #"{"a":1,}"#, "1 2", "- 1", "1.", "tru", #""\x""#, "\"a\nb\"", #""\u12"#,
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
    ])
    func refused(text: String) {
        #expect(JSONValue(parsing: text) == nil)
    }

    @Test("a pending install and a pending purchase read back what was written; others are not theirs")
    func pendingState() throws {
        let install = PendingInstall(occurredAt: "2026-11-24T01:40:00.000Z", clipboardToken: "svc_a", code: nil)
        #expect(install.json.text == #"{"occurred_at":"2026-11-24T01:40:00.000Z","clipboard_token":"svc_a"}"#)
        #expect(PendingInstall(stored: install.json.text) == install)
        #expect(PendingInstall(stored: #"{"occurred_at":"x","code":null}"#) == nil)
        #expect(PendingInstall(stored: "") == nil)
        let purchase = PendingPurchase(transactionID: "tx", amount: Decimal(string: "9.99") ?? 0, currency: "EUR", code: "MAYA", occurredAt: "t")
        #expect(purchase.json.text == #"{"transaction_id":"tx","amount":9.99,"currency":"EUR","code":"MAYA","occurred_at":"t"}"#)
        #expect(PendingPurchase(try #require(JSONValue(parsing: purchase.json.text))) == purchase)
        #expect(PendingPurchase(try #require(JSONValue(parsing: #"{"transaction_id":"tx","amount":"9.99","currency":"EUR","occurred_at":"t"}"#))) == nil)
    }
}
