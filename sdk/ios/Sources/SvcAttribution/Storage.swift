import Foundation

/// Where the SDK keeps its four keys (`svc_install_id`, `svc_install_reported`,
/// `svc_pending_install`, `svc_pending_purchases`) between launches.
///
/// Synchronous, as `UserDefaults` is. A call that throws is logged and contained: a key the SDK
/// could not read is never written during that launch, so a value it could not see (the real
/// install ID, waiting purchases) is never overwritten.
public protocol SvcStorage: Sendable {
    /// The string stored under `key`, or `nil` when there is none.
    func string(forKey key: String) throws -> String?
    /// Stores `value` under `key`.
    func set(_ value: String, forKey key: String) throws
}

/// The default storage: `UserDefaults.standard`, or the suite you name (an App Group shared with
/// an extension, say).
///
/// Not the Keychain on purpose: the install ID must not outlive a reinstall, or a second install
/// from another creator's link would be credited to the first.
public struct UserDefaultsStorage: SvcStorage {
    /// The `UserDefaults` suite, or `nil` for `UserDefaults.standard`.
    public let suiteName: String?

    /// Storage in `UserDefaults.standard`, or in the suite named `suiteName`.
    public init(suiteName: String? = nil) {
        self.suiteName = suiteName
    }

    /// The string stored under `key` in the suite.
    /// - Throws: When `UserDefaults` refuses the suite name.
    public func string(forKey key: String) throws -> String? {
        try defaults().string(forKey: key)
    }

    /// Stores `value` under `key` in the suite.
    /// - Throws: When `UserDefaults` refuses the suite name.
    public func set(_ value: String, forKey key: String) throws {
        try defaults().set(value, forKey: key)
    }

    // Looked up on each call: `UserDefaults` is not Sendable, its suite name is.
    private func defaults() throws -> UserDefaults {
        guard let suiteName else { return .standard }
        guard let defaults = UserDefaults(suiteName: suiteName) else { throw UnavailableSuite(name: suiteName) }
        return defaults
    }
}

/// `UserDefaults(suiteName:)` refused the name (the app's own bundle ID, say).
struct UnavailableSuite: Error, CustomStringConvertible {
    let name: String
    var description: String { "UserDefaults refuses the suite name \(name)" }
}

/// The storage keys, the same in every SDK (sdk/vectors/README.md).
enum StorageKey {
    static let installID = "svc_install_id"
    static let installReported = "svc_install_reported"
    static let pendingInstall = "svc_pending_install"
    static let pendingPurchases = "svc_pending_purchases"
}

/// The app's storage as one client uses it: failures logged, and a key that could not be read
/// is never written afterwards.
struct KeyValueStore {
    private let storage: any SvcStorage
    private let log: Log
    private var unreadable: Set<String> = []

    init(_ storage: any SvcStorage, log: Log) {
        self.storage = storage
        self.log = log
    }

    /// The stored value; `nil` when there is none or it cannot be read (logged).
    mutating func read(_ key: String) -> String? {
        do {
            return try storage.string(forKey: key)
        } catch {
            unreadable.insert(key)
            log("storage: cannot read \(key)", error)
            return nil
        }
    }

    /// Stores `value`; false when it was not stored (storage failed, or the key was unreadable).
    @discardableResult
    func write(_ key: String, _ value: String) -> Bool {
        if unreadable.contains(key) { return false }
        do {
            try storage.set(value, forKey: key)
            return true
        } catch {
            log("storage: cannot write \(key)", error)
            return false
        }
    }

    /// Treats `key` as unreadable from now on: what it holds is kept as it is.
    mutating func keep(_ key: String) {
        unreadable.insert(key)
    }
}
