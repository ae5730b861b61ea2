import Foundation
import Testing
@testable import SvcAttribution

/// What the shared cases do not pin: time limits, caps, filters and concurrency.
@Suite("SvcClient")
struct ClientTests {
    // MARK: Time limits

    @Test("a request with no answer in 10 s is given up (and cancelled): the install stays pending, logged")
    func requestTimeLimit() async throws {
        let clock = TestClock(elapsing: [10])
        let cancelled = Locked(false)
        let transport = FakeTransport { _ in
            do { try await Task.sleep(nanoseconds: aDay) } catch { cancelled.withValue { $0 = true } }
            throw URLError(.cancelled)
        }
        let storage = MemoryStorage()
        let log = LogRecorder()
        let client = makeClient(storage: storage, transport: transport, sleep: clock.sleep, log: log)

        #expect(await client.trackInstall() == nil)
        #expect(clock.asked.current == [10_000_000_000])
        #expect(log.messages.contains("svc: /api/public/attribution/installs: no answer in 10 s; kept for a later launch"))
        #expect(storage.values.current["svc_install_reported"] == nil)
        let pending = try Json.parse(try #require(storage.values.current["svc_pending_install"]))
        #expect(pending["occurred_at"]?.string.map(isTimestamp) == true)
        // The abandoned request is cancelled, not left running.
        for _ in 0..<100 where !cancelled.current { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(cancelled.current)
    }

    @Test("a clipboard read still waiting after 30 s (a paste prompt left open) gives no token; the install and a purchase still go")
    func clipboardTimeLimit() async throws {
        let clock = TestClock(elapsing: [30])
        let clipboard = FakeClipboard(.promptLeftOpen)
        let transport = FakeTransport { request in
            HTTPAnswer(status: request.path.hasSuffix("/installs") ? 201 : 200,
                       body: Data((request.path.hasSuffix("/installs") ? installAnswer(request.json["install_id"]?.string ?? "") : #"{"ok":true,"duplicate":false}"#).utf8))
        }
        let log = LogRecorder()
        let client = makeClient(clipboard: clipboard, transport: transport, sleep: clock.sleep, log: log)

        let answer = await client.trackInstall(readClipboard: true)
        #expect(answer?.install.resolutionMethod == .unattributed)
        #expect(clock.asked.current.first == 30_000_000_000)
        #expect(transport.requests.count == 1)
        #expect(transport.requests[0].json["clipboard_token"] == nil)
        #expect(log.messages.contains { $0.hasPrefix("svc: clipboard: no answer in 30 s") })
        #expect(await client.trackPurchase(transactionID: "apple:1", amount: 4.99, currency: "USD"))
        #expect(transport.requests.map(\.path) == ["/api/public/attribution/installs", "/api/public/attribution/events"])
    }

    @Test("a request answered in time ends its timer: no wait is left behind")
    func timerEndsWithTheWork() async throws {
        let waits = Locked((started: 0, ended: 0))
        let sleep: Sleep = { _ in
            waits.withValue { $0.started += 1 }
            defer { waits.withValue { $0.ended += 1 } }
            try await Task.sleep(nanoseconds: aDay)
        }
        let client = makeClient(storage: MemoryStorage(["svc_install_id": "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a", "svc_install_reported": "true"]),
                                transport: FakeTransport(status: 200), sleep: sleep)
        for index in 0..<5 { #expect(await client.trackPurchase(transactionID: "tx-\(index)", amount: 1, currency: "USD")) }
        for _ in 0..<200 where waits.current.ended < 5 { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(waits.current.started == 5)
        #expect(waits.current.ended == 5)
    }

    // MARK: Purchases

    @Test("at most 100 purchases wait; the 101st drops the oldest, logged")
    func purchaseCap() async throws {
        let storage = MemoryStorage(["svc_install_id": "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a", "svc_install_reported": "true"])
        let transport = FakeTransport { _ in throw URLError(.notConnectedToInternet) }
        let log = LogRecorder()
        let client = makeClient(storage: storage, transport: transport, log: log)
        for index in 0...100 {
            #expect(await client.trackPurchase(transactionID: "tx-\(index)", amount: 1, currency: "USD") == false)
        }
        let queue = try Json.parse(try #require(storage.values.current["svc_pending_purchases"]))
        guard case .array(let items) = queue else { Issue.record("not an array: \(queue)"); return }
        #expect(items.count == 100)
        #expect(items.first?["transaction_id"]?.string == "tx-1")
        #expect(items.last?["transaction_id"]?.string == "tx-100")
        #expect(log.messages.contains("svc: more than 100 purchases waiting: dropped tx-0"))
    }

    @Test("the transaction ID may hold 128 UTF-16 units, as the service counts, not 128 characters")
    func transactionIDLength() async {
        let transport = FakeTransport(status: 200)
        let log = LogRecorder()
        let client = makeClient(storage: MemoryStorage(["svc_install_id": "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a", "svc_install_reported": "true"]),
                                transport: transport, log: log)
        let ascii128 = String(repeating: "a", count: 128)
        let emoji64 = String(repeating: "😀", count: 64)   // 64 characters, 128 UTF-16 units
        let emoji65 = String(repeating: "😀", count: 65)   // 65 characters, 130 UTF-16 units
        #expect(await client.trackPurchase(transactionID: ascii128, amount: 1, currency: "USD"))
        #expect(await client.trackPurchase(transactionID: emoji64, amount: 1, currency: "USD"))
        #expect(await client.trackPurchase(transactionID: ascii128 + "a", amount: 1, currency: "USD") == false)
        #expect(await client.trackPurchase(transactionID: emoji65, amount: 1, currency: "USD") == false)
        #expect(await client.trackPurchase(transactionID: "   ", amount: 1, currency: "USD") == false)
        #expect(transport.requests.compactMap { $0.json["transaction_id"]?.string } == [ascii128, emoji64])
        #expect(log.messages.filter { $0.contains("transactionID must be 1 to 128 characters") }.count == 3)
    }

    @Test("the amount is sent as the decimal the app gave, literal or StoreKit's, and kept so in the queue")
    func amountsAreExactDecimals() async throws {
        let storage = MemoryStorage(["svc_install_id": "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a", "svc_install_reported": "true"])
        let online = Locked(false)
        let transport = FakeTransport { _ in
            guard online.current else { throw URLError(.notConnectedToInternet) }
            return HTTPAnswer(status: 200, body: Data(#"{"ok":true,"duplicate":false}"#.utf8))
        }
        let client = makeClient(storage: storage, transport: transport)
        // A literal goes through Double: Decimal holds 4.990000000000001024 here.
        #expect(await client.trackPurchase(transactionID: "tx-literal", amount: 4.99, currency: "USD") == false)
        #expect(await client.trackPurchase(transactionID: "tx-storekit", amount: Decimal(string: "9.99") ?? 0, currency: "EUR") == false)
        #expect(await client.trackPurchase(transactionID: "tx-large", amount: 1234567.891, currency: "USD") == false)
        let queued = try #require(storage.values.current["svc_pending_purchases"])
        #expect(queued.contains(#""transaction_id":"tx-literal","amount":4.99,"#))
        #expect(queued.contains(#""amount":9.99,"#))
        #expect(queued.contains(#""amount":1234567.891,"#))

        online.withValue { $0 = true }
        let nextLaunch = makeClient(storage: storage, transport: transport)
        #expect(await nextLaunch.trackPurchase(transactionID: "tx-refund", amount: -0.99, currency: "USD"))
        let sent = transport.requests.suffix(4).map { String(decoding: $0.body, as: UTF8.self) }
        #expect(sent.count == 4)
        #expect(sent[0].contains(#""amount":4.99,"#))
        #expect(sent[1].contains(#""amount":9.99,"#))
        #expect(sent[2].contains(#""amount":1234567.891,"#))
        #expect(sent[3].contains(#""amount":-0.99,"#))
        #expect(Decimal.nan.isNaN)
        #expect(await nextLaunch.trackPurchase(transactionID: "tx-nan", amount: .nan, currency: "USD") == false)
    }

    @Test("bodies carry the fields of SPEC 4.2 in the README's order, and leave out what is absent")
    func bodies() async throws {
        let transport = FakeTransport { request in
            let id = request.json["install_id"]?.string ?? ""
            return HTTPAnswer(status: request.path.hasSuffix("/installs") ? 201 : 200,
                              body: Data((request.path.hasSuffix("/installs") ? installAnswer(id) : #"{"ok":true,"duplicate":false}"#).utf8))
        }
        let client = makeClient(transport: transport)
        _ = await client.trackInstall()
        _ = await client.trackPurchase(transactionID: "apple:2000000123456789", amount: 4.99, currency: "USD", code: " MAYA ")
        let id = await client.installID()
        let bodies = transport.requests.map { String(decoding: $0.body, as: UTF8.self) }
        try #require(bodies.count == 2)
        #expect(bodies[0].hasPrefix(#"{"pixel_key":"pk_test","install_id":"\#(id)","platform":"ios","app_version":"1.0","occurred_at":""#))
        #expect(!bodies[0].contains("clipboard_token") && !bodies[0].contains("code") && !bodies[0].contains("null"))
        #expect(bodies[1].hasPrefix(#"{"pixel_key":"pk_test","event_type":"purchase","source":"sdk","transaction_id":"apple:2000000123456789","external_user_id":"\#(id)","amount":4.99,"currency":"USD","code":"MAYA","occurred_at":""#))
    }

    // MARK: Install ID

    @Test("the install ID is a lower-case UUID v4, stored, and the same as installUUID()")
    func installIDIsALowerCaseUUID() async {
        let storage = MemoryStorage()
        let client = makeClient(storage: storage, transport: FakeTransport(status: 201))
        let id = await client.installID()
        #expect(isLowercaseUUIDv4(id))
        #expect(storage.values.current["svc_install_id"] == id)
        #expect(await client.installUUID().uuidString.lowercased() == id)
        #expect(await makeClient(storage: storage, transport: FakeTransport(status: 201)).installID() == id)
    }

    @Test("a stored upper-case UUID is the install ID, sent in lower case and left as stored")
    func upperCaseStoredUUID() async {
        let storage = MemoryStorage(["svc_install_id": "0B7C6A3E-5D4F-4E2A-9C1B-7F8E6D5C4B3A"])
        let transport = FakeTransport(status: 201, body: installAnswer("0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a"))
        let client = makeClient(storage: storage, transport: transport)
        #expect(await client.trackInstall() != nil)
        #expect(transport.requests.first?.json["install_id"] == .string("0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a"))
        #expect(await client.installID() == "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a")
        #expect(storage.values.current["svc_install_id"] == "0B7C6A3E-5D4F-4E2A-9C1B-7F8E6D5C4B3A")
    }

    @Test("a stored install ID that is not a UUID is left as it is, and no install is reported over it")
    func foreignInstallID() async {
        let storage = MemoryStorage(["svc_install_id": "user-42"])
        let transport = FakeTransport(status: 201)
        let log = LogRecorder()
        let client = makeClient(storage: storage, transport: transport, log: log)
        #expect(await client.trackInstall() == nil)
        #expect(transport.requests.isEmpty)
        #expect(storage.values.current == ["svc_install_id": "user-42"])
        #expect(isLowercaseUUIDv4(await client.installID()))
        #expect(log.messages.contains { $0.contains("svc_install_id holds something other than an install ID") })
    }

    // MARK: Clipboard and pasted text

    @Test("a click token is svc_ then ASCII letters, digits, _ and - only, once trimmed", arguments: [
        ("svc_7Hq2mXw9", "svc_7Hq2mXw9"),
        ("\n  svc_a-b_C9 \t", "svc_a-b_C9"),
        ("\u{00A0}svc_abc\u{3000}\r\n", "svc_abc"),
        ("svc_", nil),
        ("svc_café", nil),
        ("svc_１２３", nil),
        ("svc_abc\u{200B}", nil),
        ("svc_ab cd", nil),
        ("svc_ab+cd", nil),
        ("SVC_abc", nil),
        ("https://maya.link/app?svc_cid=svc_abc", nil),
        ("", nil),
    ] as [(String, String?)])
    func clickTokenFilter(text: String, token: String?) {
        #expect(ClickToken.find(in: text) == token)
    }

    @Test("pasted text is sent when it is a click token, without reading the clipboard; a pending token wins")
    func pastedText() async throws {
        let clipboard = FakeClipboard(.text("svc_fromClipboard"))
        let offline = Locked(true)
        let transport = FakeTransport { request in
            if offline.current { throw URLError(.notConnectedToInternet) }
            return HTTPAnswer(status: 201, body: Data(installAnswer(request.json["install_id"]?.string ?? "", method: "clipboard").utf8))
        }
        let storage = MemoryStorage()
        let log = LogRecorder()
        #expect(await makeClient(storage: storage, clipboard: clipboard, transport: transport, log: log).trackInstall(pastedText: " svc_pasted1 ") == nil)
        offline.withValue { $0 = false }
        let answer = await makeClient(storage: storage, clipboard: clipboard, transport: transport).trackInstall(pastedText: "svc_pastedLater")
        #expect(answer?.install.resolutionMethod == .clipboard)
        #expect(transport.requests.map { $0.json["clipboard_token"]?.string } == ["svc_pasted1", "svc_pasted1"])
        #expect(clipboard.reads.current == 0)

        let other = FakeTransport(status: 201, body: installAnswer("x"))
        let quiet = LogRecorder()
        _ = await makeClient(transport: other, log: quiet).trackInstall(pastedText: "my phone is 555 0100")
        _ = await makeClient(transport: other, log: quiet).trackInstall(pastedText: nil, code: "MAYA")
        #expect(other.requests.map { $0.json["clipboard_token"] } == [nil, nil])
        #expect(other.requests.last?.json["code"]?.string == "MAYA")
        #expect(!quiet.messages.contains { $0.contains("555") })
    }

    @Test("wouldReadClipboard: only while the install is unreported, no token pending, a clipboard configured and holding text; it reads nothing")
    func wouldReadClipboard() async {
        let withText = FakeClipboard(.text("svc_abc"))
        let transport = FakeTransport(status: 201, body: installAnswer("x"))
        let fresh = makeClient(clipboard: withText, transport: transport)
        #expect(await fresh.wouldReadClipboard())
        #expect(await makeClient(clipboard: FakeClipboard(.empty), transport: transport).wouldReadClipboard() == false)
        #expect(await makeClient(clipboard: nil, transport: transport).wouldReadClipboard() == false)
        let pendingToken = MemoryStorage(["svc_install_id": "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a",
                                          "svc_pending_install": #"{"occurred_at":"2026-11-24T01:40:00.000Z","clipboard_token":"svc_abc"}"#])
        #expect(await makeClient(storage: pendingToken, clipboard: withText, transport: transport).wouldReadClipboard() == false)
        let unwritable = MemoryStorage(failing: .writes)
        #expect(await makeClient(storage: unwritable, clipboard: withText, transport: transport).wouldReadClipboard() == false)
        _ = await fresh.trackInstall()
        #expect(await fresh.wouldReadClipboard() == false)
        #expect(withText.reads.current == 0)

        // Not while an install is being reported (it may be reading the clipboard itself).
        let slow = FakeTransport { request in
            try await Task.sleep(nanoseconds: 200_000_000)
            return HTTPAnswer(status: 201, body: Data(installAnswer(request.json["install_id"]?.string ?? "").utf8))
        }
        let busy = makeClient(clipboard: withText, transport: slow)
        async let install = busy.trackInstall()
        while slow.requests.isEmpty { try? await Task.sleep(nanoseconds: 1_000_000) }
        #expect(await busy.wouldReadClipboard() == false)
        _ = await install
    }

    // MARK: Concurrency

    @Test("many calls at once: one install request, first; each purchase sent once; every call answered")
    func manyConcurrentCalls() async {
        let transport = FakeTransport { request in
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...2_000_000))
            let installs = request.path.hasSuffix("/installs")
            return HTTPAnswer(status: installs ? 201 : 200,
                              body: Data((installs ? installAnswer(request.json["install_id"]?.string ?? "") : #"{"ok":true,"duplicate":false}"#).utf8))
        }
        let client = makeClient(transport: transport)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<40 {
                group.addTask { await client.trackInstall(readClipboard: false) != nil }
                group.addTask { await client.trackPurchase(transactionID: "tx-\(index)", amount: 1, currency: "USD") }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let paths = transport.requests.map(\.path)
        #expect(paths.first == "/api/public/attribution/installs")
        #expect(paths.filter { $0.hasSuffix("/installs") }.count == 1)
        let sent = transport.requests.compactMap { $0.json["transaction_id"]?.string }
        #expect(sent.count == 40 && Set(sent).count == 40)
        #expect(results.filter { $0 }.count >= 41)   // every purchase, and the install calls that shared the report
    }

    // MARK: Answers and configuration

    @Test("a 2xx whose body is not JSON is sent again later; other 4xx are final; nothing throws")
    func unreadableAnswers() async {
        let storage = MemoryStorage()
        let garbled = FakeTransport(status: 201, body: "<html>proxy</html>")
        #expect(await makeClient(storage: storage, transport: garbled).trackInstall() == nil)
        #expect(storage.values.current["svc_install_reported"] == nil)
        #expect(storage.values.current["svc_pending_install"] != nil)
        let gone = FakeTransport(status: 410, body: #"{"error":"gone"}"#)
        let log = LogRecorder()
        #expect(await makeClient(storage: storage, transport: gone, log: log).trackInstall() == nil)
        #expect(storage.values.current["svc_install_reported"] == "true")
        #expect(storage.values.current["svc_pending_install"] == "")
        #expect(log.messages.contains(#"svc: /api/public/attribution/installs: refused with HTTP 410 {"error":"gone"}; not sent again"#))
    }

    @Test("a blank pixel key or an endpoint that is not http(s) sends nothing, logs why, and throws nothing", arguments: [
        ("  ", "https://svc.test", "pixelKey is required"),
        ("pk_test", "ftp://svc.test", "endpoint must be an http or https URL"),
        ("pk_test", "svc.test", "endpoint must be an http or https URL"),
    ])
    func badConfiguration(pixelKey: String, endpoint: String, problem: String) async {
        let transport = FakeTransport(status: 201)
        let log = LogRecorder()
        let client = makeClient(transport: transport, log: log, pixelKey: pixelKey, endpoint: endpoint)
        #expect(log.messages == ["svc: \(problem); nothing will be sent"])
        #expect(await client.trackInstall() == nil)
        #expect(await client.trackPurchase(transactionID: "tx", amount: 1, currency: "USD") == false)
        #expect(transport.requests.isEmpty)
        #expect(log.messages.last == "svc: trackPurchase: \(problem)")
    }

    @Test("a stored queue that is not JSON is logged and replaced once the purchase is sent")
    func unreadableQueue() async {
        let storage = MemoryStorage(["svc_install_id": "0b7c6a3e-5d4f-4e2a-9c1b-7f8e6d5c4b3a", "svc_install_reported": "true",
                                     "svc_pending_purchases": "not json"])
        let log = LogRecorder()
        let client = makeClient(storage: storage, transport: FakeTransport(status: 200), log: log)
        #expect(await client.trackPurchase(transactionID: "tx", amount: 1, currency: "USD"))
        #expect(storage.values.current["svc_pending_purchases"] == "[]")
        #expect(log.messages.contains("svc: storage: svc_pending_purchases is not a JSON array; starting an empty queue"))
    }

    @Test("an answer decodes into InstallAnswer and encodes back to the service's JSON, nulls included")
    func installAnswerCoding() throws {
        let text = #"{"ok":true,"duplicate":true,"install":{"install_id":"i","platform":"ios","attributed":true,"resolution_method":"code","confidence":0.9,"link":null,"code":"MAYA24","creator":{"id":"cr_maya","name":"Maya Lopez"}}}"#
        let answer = try JSONDecoder().decode(InstallAnswer.self, from: Data(text.utf8))
        #expect(answer.duplicate && answer.install.resolutionMethod == .code && answer.install.creator?.name == "Maya Lopez")
        #expect(try Json.of(answer) == (try Json.parse(text)))
        let future = try JSONDecoder().decode(InstallAnswer.ResolutionMethod.self, from: Data(#""fingerprint""#.utf8))
        #expect(future.rawValue == "fingerprint")
    }

    @Test("amounts keep 15 significant digits: a Double's, so a literal's digits come back", arguments: [
        ("4.990000000000001024", "4.99"), ("19.98999999999999488", "19.99"), ("0.0000012340000000000002048", "0.000001234"),
        ("1234567.8899999997952", "1234567.89"), ("-0.98999999999999999488", "-0.99"), ("0", "0"), ("100", "100"),
    ])
    func significantDigits(raw: String, rounded: String) throws {
        let value = try #require(Decimal(string: raw, locale: Locale(identifier: "en_US_POSIX")))
        #expect(value.significantDigits(15).description == rounded)
    }
}
