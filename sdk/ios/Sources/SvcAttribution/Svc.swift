import Foundation

/// SvcAttribution's entry point: credits your app's installs and purchases to the creator link
/// or creator code that brought the user.
///
/// Call ``configure(pixelKey:endpoint:sandbox:log:)`` once at launch, then ``trackInstall(readClipboard:code:)``
/// at every launch and ``trackPurchase(transactionID:amount:currency:code:)`` after each purchase.
/// Nothing here throws into your app, except reading the install ID before `configure`.
public enum Svc {
    /// This package's version.
    public static let sdkVersion = Release.version

    /// The service this build reports to when `configure` is given no endpoint: the
    /// deployment's URL in a release, `http://127.0.0.1:3000` on the main branch.
    public static var defaultEndpoint: URL? { URL(string: Release.defaultEndpoint) }

    /// The clipboard `configure` uses unless told otherwise: `UIPasteboard.general` on iOS, none elsewhere.
    public static var systemClipboard: (any SvcClipboard)? {
        #if canImport(UIKit) && os(iOS)
        SystemClipboard()
        #else
        nil
        #endif
    }

    // MARK: - Configuration

    /// Sets up the default client, which the static methods use, and answers it. Call it once,
    /// at launch, before any tracking; it reads nothing and sends nothing.
    ///
    /// The install ID is kept in `UserDefaults.standard`, the clipboard is `UIPasteboard.general`
    /// (read only when you allow it), and the app version is the bundle's `CFBundleShortVersionString`.
    ///
    /// - Parameters:
    ///   - pixelKey: Your brand's public pixel key, `pk_…` (the portal's Setup page).
    ///   - endpoint: The service's base URL; `nil` for ``defaultEndpoint``.
    ///   - sandbox: Accepted, but the events endpoint has no sandbox flag: purchases are recorded
    ///     as live revenue. Do not report test purchases.
    ///   - log: Receives every failure the SDK contains; `nil` to log nothing.
    @discardableResult
    public static func configure(pixelKey: String, endpoint: URL? = nil, sandbox: Bool = false, log: SvcLogHandler? = nil) -> SvcClient {
        configure(pixelKey: pixelKey, endpoint: endpoint, sandbox: sandbox, storage: UserDefaultsStorage(), log: log)
    }

    /// Sets up the default client with your own storage and clipboard: an App Group's
    /// `UserDefaultsStorage(suiteName:)`, storage for tests, or a driver on Linux.
    ///
    /// - Parameters:
    ///   - storage: Where the install ID and the work left to do are kept.
    ///   - clipboard: Where a click token may be read; `nil` never reads one.
    ///   - Other parameters: As ``configure(pixelKey:endpoint:sandbox:log:)``.
    @discardableResult
    public static func configure(pixelKey: String, endpoint: URL? = nil, sandbox: Bool = false,
                                 storage: any SvcStorage, clipboard: (any SvcClipboard)? = Svc.systemClipboard,
                                 log: SvcLogHandler? = nil) -> SvcClient {
        let client = makeClient(pixelKey: pixelKey, endpoint: endpoint, sandbox: sandbox, storage: storage, clipboard: clipboard, log: log)
        if defaultClient.replace(with: client) {
            Log(handler: log)("configure() called again: the new client replaces the default one; the previous one still finishes what it is sending")
        }
        return client
    }

    /// Makes a client independent of the default one, as ``configure(pixelKey:endpoint:sandbox:log:)`` configures it.
    public static func makeClient(pixelKey: String, endpoint: URL? = nil, sandbox: Bool = false, log: SvcLogHandler? = nil) -> SvcClient {
        makeClient(pixelKey: pixelKey, endpoint: endpoint, sandbox: sandbox, storage: UserDefaultsStorage(), log: log)
    }

    /// Makes a client independent of the default one, with your own storage and clipboard.
    /// Two clients over the same storage at once may report the same install twice: make one per storage.
    public static func makeClient(pixelKey: String, endpoint: URL? = nil, sandbox: Bool = false,
                                  storage: any SvcStorage, clipboard: (any SvcClipboard)? = Svc.systemClipboard,
                                  log: SvcLogHandler? = nil) -> SvcClient {
        SvcClient(pixelKey: pixelKey, endpoint: endpoint, sandbox: sandbox, platform: "ios",
                  appVersion: Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String,
                  storage: storage, clipboard: clipboard, transport: URLSessionTransport.shared, log: log)
    }

    /// The default client, once ``configure(pixelKey:endpoint:sandbox:log:)`` has run.
    public static var client: SvcClient? { defaultClient.current }

    // MARK: - The default client's calls

    /// The default client's ``SvcClient/trackInstall(readClipboard:code:)``; `nil` before `configure`.
    @discardableResult
    public static func trackInstall(readClipboard: Bool = false, code: String? = nil) async -> InstallAnswer? {
        guard let client = configured("trackInstall") else { return nil }
        return await client.trackInstall(readClipboard: readClipboard, code: code)
    }

    /// The default client's ``SvcClient/trackInstall(pastedText:code:)``; `nil` before `configure`.
    @discardableResult
    public static func trackInstall(pastedText: String?, code: String? = nil) async -> InstallAnswer? {
        guard let client = configured("trackInstall") else { return nil }
        return await client.trackInstall(pastedText: pastedText, code: code)
    }

    /// The default client's ``SvcClient/wouldReadClipboard()``; `false` before `configure`.
    public static func wouldReadClipboard() async -> Bool {
        guard let client = configured("wouldReadClipboard") else { return false }
        return await client.wouldReadClipboard()
    }

    /// The default client's ``SvcClient/trackPurchase(transactionID:amount:currency:code:)``; `false` before `configure`.
    @discardableResult
    public static func trackPurchase(transactionID: String, amount: Decimal, currency: String, code: String? = nil) async -> Bool {
        guard let client = configured("trackPurchase") else { return false }
        return await client.trackPurchase(transactionID: transactionID, amount: amount, currency: currency, code: code)
    }

    /// The default client's install ID (a lower-case UUID).
    /// - Throws: ``SvcError/notConfigured`` before ``configure(pixelKey:endpoint:sandbox:log:)``: a programming error.
    public static func installID() async throws -> String {
        guard let client = defaultClient.current else { throw SvcError.notConfigured }
        return await client.installID()
    }

    /// The default client's install ID as a `UUID`, for StoreKit's `appAccountToken`.
    /// - Throws: ``SvcError/notConfigured`` before ``configure(pixelKey:endpoint:sandbox:log:)``.
    public static func installUUID() async throws -> UUID {
        guard let client = defaultClient.current else { throw SvcError.notConfigured }
        return await client.installUUID()
    }

    private static let defaultClient = DefaultClient()

    private static func configured(_ call: String) -> SvcClient? {
        let client = defaultClient.current
        #if DEBUG
        if client == nil { print("SvcAttribution: \(call) called before Svc.configure(); nothing sent") }
        #endif
        return client
    }
}

/// The one error the SDK throws.
public enum SvcError: Error, Equatable, CustomStringConvertible {
    /// The install ID was read before `Svc.configure`.
    case notConfigured

    /// What went wrong, for a developer.
    public var description: String {
        switch self {
        case .notConfigured: "Svc.installID() was called before Svc.configure()"
        }
    }
}

/// The default client. A lock, not an actor: `configure` is synchronous so that the call on the
/// next line already finds the client, and an actor can only be reached with `await`.
private final class DefaultClient: @unchecked Sendable {
    private let lock = NSLock()
    private var client: SvcClient?

    var current: SvcClient? {
        lock.lock()
        defer { lock.unlock() }
        return client
    }

    /// Makes `client` the default; true when it replaced another.
    func replace(with client: SvcClient) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let replaced = self.client != nil
        self.client = client
        return replaced
    }
}
