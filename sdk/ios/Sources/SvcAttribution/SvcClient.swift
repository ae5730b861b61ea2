import Foundation

/// Reports one app's install and purchases to the service. ``Svc/configure(pixelKey:endpoint:sandbox:log:)``
/// makes the default one; ``Svc/makeClient(pixelKey:endpoint:sandbox:log:)`` an independent one.
///
/// No method throws: network and storage failures are contained and reported to the `log` handler.
/// Work that could not be done now (an install or purchase the service did not get) is kept in
/// storage and done by a later call, at this launch or the next.
public actor SvcClient {
    private let pixelKey: String
    private let platform: String
    private let appVersion: String?
    /// Why this client sends nothing (a blank pixel key, an endpoint that is not http(s)), or nil.
    private let problem: String?
    private let courier: Courier
    private let clipboard: (any SvcClipboard)?
    private let now: @Sendable () -> Date
    private let log: Log
    private var store: KeyValueStore

    /// The install ID, and whether storage holds it (read from it, or written to it at this launch).
    private var identity: (uuid: UUID, kept: Bool)?
    private var reported = false
    /// The install being reported: calls made meanwhile share it, so the install is sent once.
    private var installFlight: Task<InstallAnswer?, Never>?
    /// Purchases waiting to be sent, loaded once; `storedQueue` is the JSON storage holds.
    private var queue: [PendingPurchase]?
    private var storedQueue: String?
    /// The end of the line of purchase sends: each waits for the one before.
    private var purchaseLine: Task<Void, Never>?

    init(pixelKey: String, endpoint: URL?, sandbox: Bool, platform: String, appVersion: String?,
         storage: any SvcStorage, clipboard: (any SvcClipboard)?, transport: any HTTPTransport,
         now: @escaping @Sendable () -> Date = { Date() },
         sleep: @escaping Sleep = { try await Task.sleep(nanoseconds: $0) },
         log handler: SvcLogHandler?) {
        let log = Log(handler: handler)
        let endpoint = endpoint ?? Svc.defaultEndpoint
        let base = endpoint.map { url in
            var text = url.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            return text
        } ?? ""
        self.pixelKey = pixelKey.trimmed
        self.platform = platform
        self.appVersion = appVersion?.nonBlank
        self.problem = Self.problem(pixelKey: pixelKey, endpoint: endpoint, platform: platform)
        self.courier = Courier(endpoint: base, transport: transport, sleep: sleep, log: log)
        self.clipboard = clipboard
        self.now = now
        self.log = log
        self.store = KeyValueStore(storage, log: log)
        if let problem { log("\(problem); nothing will be sent") }
        if sandbox { log("sandbox: the events endpoint has no sandbox flag, so purchases are recorded as live revenue") }
    }

    private static func problem(pixelKey: String, endpoint: URL?, platform: String) -> String? {
        if pixelKey.nonBlank == nil { return "pixelKey is required" }
        guard let endpoint, ["http", "https"].contains(endpoint.scheme?.lowercased()), endpoint.host != nil else {
            return "endpoint must be an http or https URL"
        }
        if platform != "ios", platform != "android" { return "platform must be ios or android" }
        return nil
    }

    // MARK: - Install ID

    /// The install ID: a UUID made at the first launch and kept in storage, in lower case.
    ///
    /// While storage cannot keep it, an ID kept in memory for this launch (purchases still go
    /// under it, but no install carries it). Never throws.
    public func installID() -> String {
        installIdentity().uuid.uuidString.lowercased()
    }

    /// The install ID as a `UUID`, for StoreKit's `appAccountToken`.
    public func installUUID() -> UUID {
        installIdentity().uuid
    }

    private func installIdentity() -> (uuid: UUID, kept: Bool) {
        if let identity { return identity }
        let made: (uuid: UUID, kept: Bool)
        if let stored = store.read(StorageKey.installID)?.nonBlank {
            if let uuid = UUID(uuidString: stored) {
                // Sent in lower case whatever the stored case: the service lower-cases the
                // webhooks' UUIDs (appAccountToken), and the two must match.
                made = (uuid, true)
            } else {
                // Not a UUID, so no appAccountToken can carry it: left as it is, no install reported over it.
                log("storage: \(StorageKey.installID) holds something other than an install ID; it is left as it is")
                store.keep(StorageKey.installID)
                made = (UUID(), false)
            }
        } else {
            let uuid = UUID()
            made = (uuid, store.write(StorageKey.installID, uuid.uuidString.lowercased()))
        }
        identity = made
        return made
    }

    // MARK: - Install

    /// Reports the install once; call it at every launch.
    ///
    /// With `readClipboard: true` the SDK may read the clipboard (at most while the install is
    /// unreported) and sends its text only when it is a click token (`svc_…`). On iOS 16 and
    /// later that read shows the system's paste prompt; ``wouldReadClipboard()`` tells whether
    /// it would happen now, and ``trackInstall(pastedText:code:)`` avoids it.
    ///
    /// - Parameters:
    ///   - readClipboard: Whether the SDK may read the clipboard for a click token.
    ///   - code: A creator code the user typed.
    /// - Returns: The service's answer, or `nil` when nothing was sent (already reported, or
    ///   storage cannot keep the install ID) or sending failed (it is sent again later).
    @discardableResult
    public func trackInstall(readClipboard: Bool = false, code: String? = nil) async -> InstallAnswer? {
        await trackInstall(InstallInput(clickToken: readClipboard ? .clipboard : .none, code: code))
    }

    /// Reports the install once, with text the user pasted (from `UIPasteControl` or SwiftUI's
    /// `PasteButton`, which show no prompt) in place of a clipboard read.
    ///
    /// The text is sent only when it is a click token; a token an earlier launch already found
    /// wins. The clipboard itself is not read.
    ///
    /// - Parameters:
    ///   - pastedText: What the user pasted, or `nil` when they chose not to.
    ///   - code: A creator code the user typed.
    /// - Returns: As ``trackInstall(readClipboard:code:)``.
    @discardableResult
    public func trackInstall(pastedText: String?, code: String? = nil) async -> InstallAnswer? {
        await trackInstall(InstallInput(clickToken: .pasted(pastedText), code: code))
    }

    /// Whether ``trackInstall(readClipboard:code:)`` with `readClipboard: true` would read the
    /// clipboard now: the install is unreported and not being reported, no click token is pending,
    /// a clipboard is configured and it holds text. Asking shows no prompt. Like every call, it
    /// makes the install ID at the first launch.
    public func wouldReadClipboard() async -> Bool {
        guard problem == nil, let clipboard, installFlight == nil, !isReported(), installIdentity().kept,
              PendingInstall(stored: store.read(StorageKey.pendingInstall))?.clipboardToken == nil else { return false }
        let hasStrings = await race({ await clipboard.hasStrings() }, within: Limits.clipboardSeconds, sleep: courier.sleep)
        if case .finished(true) = hasStrings { return true }
        return false
    }

    private func trackInstall(_ input: InstallInput) async -> InstallAnswer? {
        if let problem {
            log("trackInstall: \(problem)")
            return nil
        }
        if let installFlight { return await installFlight.value }
        let flight = Task {
            let answer = await reportInstall(input)
            // Waiting purchases go after the install, so that they can inherit its attribution.
            if reported { _ = await inPurchaseLine { await self.sendQueue() } }
            installFlight = nil
            return answer
        }
        installFlight = flight
        return await flight.value
    }

    /// Known reported: in memory, or in storage (any value counts).
    private func isReported() -> Bool {
        if !reported, store.read(StorageKey.installReported) != nil { reported = true }
        return reported
    }

    private func reportInstall(_ input: InstallInput) async -> InstallAnswer? {
        if isReported() { return nil }
        let identity = installIdentity()
        // Under an ID that storage does not hold, the next launch would report the install again
        // under a new ID and it would count twice (also when a stored ID merely failed to read now).
        guard identity.kept else {
            log("storage cannot hold the install ID: the install is not reported this launch")
            return nil
        }
        // An install that failed before is sent again as first tried: its time, token and code.
        let storedPending = store.read(StorageKey.pendingInstall)
        let before = PendingInstall(stored: storedPending)
        var clickToken = before?.clipboardToken
        if clickToken == nil {
            switch input.clickToken {
            case .none: break
            case .clipboard: clickToken = await readClipboardToken()
            case .pasted(let text): clickToken = ClickToken.find(in: text)
            }
        }
        let pending = PendingInstall(
            occurredAt: before?.occurredAt ?? timestamp(),
            clipboardToken: clickToken,
            code: input.code?.nonBlank ?? before?.code
        )
        let body = JSONValue.object([
            "pixel_key": .string(pixelKey),
            "install_id": .string(identity.uuid.uuidString.lowercased()),
            "platform": .string(platform),
            "app_version": appVersion.map(JSONValue.string),
            "occurred_at": .string(pending.occurredAt),
            "clipboard_token": pending.clipboardToken.map(JSONValue.string),
            "code": pending.code.map(JSONValue.string),
        ])
        let delivery = await courier.post(Path.installs, body)
        if case .retryLater = delivery {
            let text = pending.json.text
            if text != storedPending { store.write(StorageKey.pendingInstall, text) }
            return nil
        }
        // Reported, or refused for good (a wrong pixel key): either way it is never sent again.
        reported = true
        store.write(StorageKey.installReported, "true")
        if let storedPending, !storedPending.isEmpty { store.write(StorageKey.pendingInstall, "") }
        guard case .delivered(let data) = delivery else { return nil }
        do {
            return try JSONDecoder().decode(InstallAnswer.self, from: data)
        } catch {
            log("\(Path.installs): the answer is not an install answer", error)
            return nil
        }
    }

    /// The click token on the clipboard, if any. Never logs the text.
    private func readClipboardToken() async -> String? {
        guard let clipboard else { return nil }
        let read = await race({ () -> Result<String?, any Error> in
            guard await clipboard.hasStrings() else { return .success(nil) }
            do { return .success(try await clipboard.string()) } catch { return .failure(error) }
        }, within: Limits.clipboardSeconds, sleep: courier.sleep)
        switch read {
        case .timedOut:
            log("clipboard: no answer in \(Int(Limits.clipboardSeconds)) s (a paste prompt left open?); the install goes without a click token")
            return nil
        case .finished(.failure(let error)):
            log("clipboard: cannot read it", error)
            return nil
        case .finished(.success(let text)):
            return ClickToken.find(in: text)
        }
    }

    /// True when an earlier launch could not send the install (it waits in storage).
    private func installPending() -> Bool {
        !isReported() && PendingInstall(stored: store.read(StorageKey.pendingInstall)) != nil
    }

    // MARK: - Purchases

    /// Reports a purchase, after the install (so that it inherits the install's attribution).
    ///
    /// - Parameters:
    ///   - transactionID: The store's transaction ID, the deduplication key: at most 128
    ///     characters (UTF-16 units). For the App Store use `apple:<transaction id>`, the key the
    ///     App Store's webhook uses.
    ///   - amount: What the user paid, in major units (StoreKit's `price`). Sent as the decimal
    ///     you give, with at most 15 significant digits, so a literal `4.99` is sent as `4.99`.
    ///   - currency: `USD`, `CAD`, `EUR`, `GBP` or `AUD`; the service records any other as `USD`.
    ///   - code: A creator code the user typed at checkout.
    /// - Returns: `true` once the service has the purchase (recorded now or before), `false`
    ///   otherwise. A purchase not sent for want of network is kept and sent again later.
    @discardableResult
    public func trackPurchase(transactionID: String, amount: Decimal, currency: String, code: String? = nil) async -> Bool {
        if let problem {
            log("trackPurchase: \(problem)")
            return false
        }
        guard let transactionID = transactionID.nonBlank, transactionID.utf16.count <= Limits.transactionIDLength else {
            log("trackPurchase: transactionID must be 1 to \(Limits.transactionIDLength) characters; not sent")
            return false
        }
        guard amount.isFinite else {
            log("trackPurchase: amount must be a finite number; not sent")
            return false
        }
        guard let currency = currency.nonBlank else {
            log("trackPurchase: currency is required; not sent")
            return false
        }
        let purchase = PendingPurchase(transactionID: transactionID, amount: amount.significantDigits(15),
                                       currency: currency, code: code?.nonBlank, occurredAt: timestamp())
        // An install being reported, or left pending by an earlier launch, goes first.
        if let installFlight {
            _ = await installFlight.value
        } else if installPending() {
            await trackInstall(readClipboard: false)
        }
        return await inPurchaseLine {
            await self.enqueue(purchase)
            return await self.sendQueue().contains(transactionID)
        }
    }

    /// Adds `purchase` to the queue (once per transaction ID); past 100 the oldest is dropped.
    private func enqueue(_ purchase: PendingPurchase) {
        var pending = loadQueue()
        guard !pending.contains(where: { $0.transactionID == purchase.transactionID }) else { return }
        pending.append(purchase)
        while pending.count > Limits.pendingPurchases {
            let dropped = pending.removeFirst()
            log("more than \(Limits.pendingPurchases) purchases waiting: dropped \(dropped.transactionID)")
        }
        queue = pending
    }

    private func loadQueue() -> [PendingPurchase] {
        if let queue { return queue }
        storedQueue = store.read(StorageKey.pendingPurchases)
        var loaded: [PendingPurchase] = []
        if let storedQueue {
            if case .array(let items) = JSONValue(parsing: storedQueue) {
                loaded = items.compactMap(PendingPurchase.init)
            } else {
                log("storage: \(StorageKey.pendingPurchases) is not a JSON array; starting an empty queue")
            }
        }
        queue = loaded
        return loaded
    }

    /// Sends the queue in order and stops at the first purchase the service cannot take now;
    /// answers the transaction IDs it delivered.
    private func sendQueue() async -> Set<String> {
        var delivered: Set<String> = []
        var pending = loadQueue()
        let installID = installID()
        while let purchase = pending.first {
            let body = JSONValue.object([
                "pixel_key": .string(pixelKey),
                "event_type": .string("purchase"),
                "source": .string("sdk"),
                "transaction_id": .string(purchase.transactionID),
                "external_user_id": .string(installID),
                "amount": .number(purchase.amount),
                "currency": .string(purchase.currency),
                "code": purchase.code.map(JSONValue.string),
                "occurred_at": .string(purchase.occurredAt),
            ])
            let delivery = await courier.post(Path.events, body)
            if case .retryLater = delivery { break }
            pending.removeFirst()
            if case .delivered = delivery { delivered.insert(purchase.transactionID) }
        }
        queue = pending
        let text = JSONValue.array(pending.map(\.json)).text
        if text != (storedQueue ?? "[]") {
            store.write(StorageKey.pendingPurchases, text)
            storedQueue = text
        }
        return delivered
    }

    /// Runs `work` after every purchase send started before it, so that a waiting purchase is
    /// never sent by two calls at once.
    private func inPurchaseLine<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
        let previous = purchaseLine
        let turn = Task {
            await previous?.value
            return await work()
        }
        purchaseLine = Task { _ = await turn.value }
        return await turn.value
    }

    private func timestamp() -> String {
        now().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// Where an install's click token may come from.
struct InstallInput: Sendable {
    enum ClickTokenSource: Sendable {
        case none
        case clipboard
        case pasted(String?)
    }

    let clickToken: ClickTokenSource
    let code: String?
}

/// The service's two public endpoints the SDK calls.
enum Path {
    static let installs = "/api/public/attribution/installs"
    static let events = "/api/public/attribution/events"
}

extension Decimal {
    /// Rounded to `digits` significant digits. A `Decimal` written as a literal (`4.99`) passes
    /// through `Double` and holds 4.990000000000001024; 15 digits, a `Double`'s, give back 4.99.
    func significantDigits(_ digits: Int) -> Decimal {
        guard isFinite, !isZero else { return self }
        let magnitude = Int(log10(abs(NSDecimalNumber(decimal: self).doubleValue)).rounded(.down)) + 1
        var value = self
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, digits - magnitude, .plain)
        return rounded
    }
}
